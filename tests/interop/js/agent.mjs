// A real A2A agent built from the official A2A JS SDK's own server classes, of either revision:
// `--sdk 0.3` is @a2a-js/sdk 0.3.14 (A2A 0.3), `--sdk 1.0` is @a2a-js/sdk 1.3.0 (A2A 1.0, no 0.3
// compat layer). The JS counterpart of agents/agent_v03.py and agents/agent_v10.py: the same
// card, the same behaviours (see agents/behaviour.py), picked by the first word of the user text.
//
// DefaultRequestHandler + InMemoryTaskStore + InMemoryPushNotificationStore with the SDK's own
// DefaultPushNotificationSender, one AgentExecutor, served by the SDK's express handlers
// (agentCardHandler, jsonRpcHandler at `/` or restHandler) or its gRPC service (grpcService on
// a port of its own, the card still over HTTP).
//
// Run: node agent.mjs --sdk 0.3|1.0 --binding jsonrpc|rest|grpc --port N [--max-connection-age-ms N]
// (N = 0 picks a free port). Prints one line `READY <base url>` once it serves, and one line
// `REQUEST <method> <target>` for each HTTP request as it arrived.

import { createHash, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import * as grpc from '@grpc/grpc-js';
import express from 'express';

const { values: args } = parseArgs({
  options: {
    sdk: { type: 'string', default: '1.0' },
    binding: { type: 'string', default: 'jsonrpc' },
    port: { type: 'string', default: '0' },
    'max-connection-age-ms': { type: 'string', default: '0' },
  },
});
const SDK = args.sdk;
const BINDING = args.binding;
const PORT = Number(args.port);
const MAX_AGE_MS = Number(args['max-connection-age-ms']);
if (!['0.3', '1.0'].includes(SDK) || !['jsonrpc', 'rest', 'grpc'].includes(BINDING)) {
  console.error('usage: node agent.mjs --sdk 0.3|1.0 --binding jsonrpc|rest|grpc --port N');
  process.exit(2);
}
const V10 = SDK === '1.0';
// stdout carries the READY line only: the SDKs' push senders log each delivery with console.info.
console.log = console.info = (...items) => console.error(...items);

const pkg = V10 ? 'a2a-js-10' : 'a2a-js-03';
const server = await import(`${pkg}/server`);
const expressApi = await import(`${pkg}/server/express`);

// --- behaviour.py ------------------------------------------------------------------------------

const AGENT_NAME = 'a2a-bridge interop agent';
const AGENT_DESCRIPTION = 'A test agent for the a2a-bridge interop suite.';
const AGENT_VERSION = '1.0.0';
const INPUT_MODES = ['text/plain', 'application/json', 'image/png', 'application/octet-stream'];
const OUTPUT_MODES = ['text/plain', 'application/json', 'image/png', 'application/octet-stream'];
const SKILL_ID = 'interop';
const EXTENDED_SKILL_ID = 'interop-extended';
const ECHO_PAUSE = 300;
const STREAM_STEPS = 4;
const STREAM_SPACING = 100;
const SLOW_TICK = 200;
const SLOW_LIMIT = 20_000;
const QUESTION = 'what is your favourite colour?';

function behaviourOf(text) {
  const word = text.trim() ? text.trim().split(' ', 1)[0].toLowerCase() : '';
  return ['echo', 'stream', 'slow', 'ask', 'parts', 'message'].includes(word) ? word : 'echo';
}

function b64decode(text) {
  text = text.trim();
  return Buffer.from(text, /[-_]/.test(text) ? 'base64url' : 'base64');
}

const bytesSummary = (raw, mediaType, name) => ({
  kind: 'bytes',
  sha256: createHash('sha256').update(raw).digest('hex'),
  size: raw.length,
  mediaType: mediaType || null,
  name: name || null,
});
const uriSummary = (uri, mediaType, name) => ({ kind: 'uri', uri, mediaType: mediaType || null, name: name || null });
const dataSummary = (data) => ({ kind: 'data', data });

// --- the two revisions' object shapes ----------------------------------------------------------

const now = () => new Date().toISOString();

// 0.3: plain JSON objects with a `kind`, states as strings; a status update that ends the
// exchange carries `final: true` (the SDK's event queue stops on it).
const v03 = {
  textPart: (text) => ({ kind: 'text', text }),
  texts: (message) => message.parts.filter((p) => p.kind === 'text').map((p) => p.text),
  state: (task) => task.status?.state,
  agentMessage: (parts, taskId, contextId) => ({
    kind: 'message',
    role: 'agent',
    messageId: randomUUID(),
    ...(taskId ? { taskId } : {}),
    contextId,
    parts,
  }),
  task: (id, contextId, state, history) => ({
    kind: 'task',
    id,
    contextId,
    status: { state, timestamp: now() },
    history,
  }),
  status: (taskId, contextId, state, message, final) => ({
    kind: 'status-update',
    taskId,
    contextId,
    status: { state, ...(message ? { message } : {}), timestamp: now() },
    final,
  }),
  artifact: (taskId, contextId, { artifactId, name, parts, append, lastChunk }) => ({
    kind: 'artifact-update',
    taskId,
    contextId,
    artifact: { artifactId, name, parts },
    ...(append !== undefined ? { append } : {}),
    ...(lastChunk !== undefined ? { lastChunk } : {}),
  }),
  wrap: (event) => event,
  nonText: (message) => message.parts.filter((p) => p.kind !== 'text'),
  summarize(part) {
    if (part.kind === 'file' && 'bytes' in part.file) {
      return bytesSummary(b64decode(part.file.bytes), part.file.mimeType, part.file.name);
    }
    if (part.kind === 'file' && 'uri' in part.file) {
      return uriSummary(part.file.uri, part.file.mimeType, part.file.name);
    }
    if (part.kind === 'data') return dataSummary(part.data);
    return null;
  },
  dataPart: (data) => ({ kind: 'data', data }),
};

// 1.0: the SDK's ts-proto shapes (`content.$case` parts, enum numbers, every field present so
// the gRPC encoder finds them), each event wrapped by `AgentEvent`.
const STATE_10 = { submitted: 1, working: 2, completed: 3, failed: 4, canceled: 5, 'input-required': 6 };
const part10 = (content, extra = {}) => ({ content, metadata: undefined, filename: '', mediaType: '', ...extra });
const v10 = {
  textPart: (text) => part10({ $case: 'text', value: text }),
  texts: (message) => message.parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value),
  state: (task) => Object.keys(STATE_10).find((k) => STATE_10[k] === task.status?.state),
  agentMessage: (parts, taskId, contextId) => ({
    messageId: randomUUID(),
    contextId,
    taskId: taskId || '',
    role: 2,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  }),
  task: (id, contextId, state, history) => ({
    id,
    contextId,
    status: { state: STATE_10[state], message: undefined, timestamp: now() },
    artifacts: [],
    history,
    metadata: undefined,
  }),
  status: (taskId, contextId, state, message) => ({
    kind: 'statusUpdate',
    data: { taskId, contextId, status: { state: STATE_10[state], message, timestamp: now() }, metadata: undefined },
  }),
  artifact: (taskId, contextId, { artifactId, name, parts, append, lastChunk }) => ({
    kind: 'artifactUpdate',
    data: {
      taskId,
      contextId,
      artifact: { artifactId, name, description: '', parts, metadata: undefined, extensions: [] },
      append: Boolean(append),
      lastChunk: Boolean(lastChunk),
      metadata: undefined,
    },
  }),
  wrap: (event) => ('messageId' in event ? server.AgentEvent.message(event) : server.AgentEvent.task(event)),
  nonText: (message) => message.parts.filter((p) => p.content?.$case !== 'text'),
  summarize(part) {
    const c = part.content;
    if (c?.$case === 'raw') return bytesSummary(Buffer.from(c.value), part.mediaType, part.filename);
    if (c?.$case === 'url') return uriSummary(c.value, part.mediaType, part.filename);
    if (c?.$case === 'data') return dataSummary(c.value);
    return null;
  },
  dataPart: (data) => part10({ $case: 'data', value: data }),
};

const api = V10 ? v10 : v03;
const FINAL = new Set(['completed', 'canceled', 'failed', 'rejected', 'input-required']);

// --- the executor ------------------------------------------------------------------------------

const running = new Map(); // taskId -> { canceled, wake }
const contexts = new Map(); // taskId -> contextId, for the cancel status

function pause(ms, control) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    control.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

class Updater {
  constructor(bus, taskId, contextId) {
    Object.assign(this, { bus, taskId, contextId });
  }
  say(text) {
    return api.agentMessage([api.textPart(text)], this.taskId, this.contextId);
  }
  publish(event) {
    this.bus.publish(event);
  }
  status(state, text) {
    const message = text === undefined ? undefined : this.say(text);
    this.publish(api.status(this.taskId, this.contextId, state, message, FINAL.has(state)));
  }
  artifact(parts, { artifactId = randomUUID(), name, append, lastChunk } = {}) {
    this.publish(api.artifact(this.taskId, this.contextId, { artifactId, name, parts, append, lastChunk }));
  }
}

class InteropExecutor {
  async execute(context, bus) {
    const message = context.userMessage;
    const text = api.texts(message).join('\n');
    const task = context.task;
    const { taskId, contextId } = context;
    contexts.set(taskId, contextId);
    const updater = new Updater(bus, taskId, contextId);
    try {
      // 1.0: every execution opens with a Task or a Message event, follow-ups included.
      if (task && V10) updater.publish(api.wrap(task));

      if (task && api.state(task) === 'input-required') {
        updater.status('working');
        updater.artifact([api.textPart(`answer: ${text}`)], { name: 'answer' });
        updater.status('completed');
        return;
      }

      const kind = behaviourOf(text);
      if (kind === 'message') {
        updater.publish(api.wrap(api.agentMessage([api.textPart(`message: ${text}`)], undefined, contextId)));
        return;
      }
      if (!task) updater.publish(api.wrap(api.task(taskId, contextId, 'submitted', [message])));

      const control = { canceled: false, wake: () => {} };
      running.set(taskId, control);
      try {
        await this.run(kind, text, message, updater, control);
      } finally {
        running.delete(taskId);
      }
    } finally {
      // 0.3 leaves closing the bus to the executor; 1.0's handler settles it itself.
      if (!V10) bus.finished();
    }
  }

  async run(kind, text, message, updater, control) {
    if (kind === 'stream') {
      for (let i = 0; i < STREAM_STEPS; i++) {
        updater.status('working', `step ${i}`);
        updater.artifact([api.textPart(`chunk ${i}`)], {
          artifactId: 'stream',
          name: 'stream',
          append: i > 0,
          lastChunk: i === STREAM_STEPS - 1,
        });
        await pause(STREAM_SPACING, control);
        if (control.canceled) return;
      }
      updater.status('completed');
    } else if (kind === 'slow') {
      updater.status('working', 'slow started');
      const deadline = Date.now() + SLOW_LIMIT;
      for (let tick = 0; Date.now() < deadline; tick++) {
        await pause(SLOW_TICK, control);
        if (control.canceled) return;
        updater.status('working', `tick ${tick}`);
      }
      updater.status('completed');
    } else if (kind === 'ask') {
      updater.status('input-required', QUESTION);
    } else if (kind === 'parts') {
      const received = api.nonText(message);
      const summary = received.map((p) => api.summarize(p)).filter((s) => s !== null);
      updater.status('working');
      updater.artifact(received, { name: 'parts-echo' });
      updater.artifact([api.dataPart({ received: summary })], { name: 'parts-summary' });
      updater.status('completed');
    } else {
      updater.status('working', `working on: ${text}`);
      await pause(ECHO_PAUSE, control);
      if (control.canceled) return;
      updater.artifact([api.textPart(`echo: ${text}`)], { name: 'echo' });
      updater.status('completed', 'done');
    }
  }

  // Stops a running behaviour and publishes the canceled status the handler waits for.
  cancelTask = async (taskId, bus) => {
    const control = running.get(taskId);
    if (control) {
      control.canceled = true;
      control.wake();
    }
    new Updater(bus, taskId, contexts.get(taskId) ?? '').status('canceled');
  };
}

// --- cards -------------------------------------------------------------------------------------

const SKILL = { id: SKILL_ID, name: 'interop behaviours', description: 'echo, stream, slow, ask, parts, message', tags: ['test'] };
const EXTENDED_SKILL = { id: EXTENDED_SKILL_ID, name: 'extended interop', description: 'only on the extended card', tags: ['test', 'extended'] };

function buildCards(url, binding) {
  let card;
  if (V10) {
    const skill10 = (s) => ({ ...s, examples: [], inputModes: [], outputModes: [], securityRequirements: [] });
    card = {
      name: AGENT_NAME,
      description: AGENT_DESCRIPTION,
      supportedInterfaces: [{ url, protocolBinding: binding, tenant: '', protocolVersion: '1.0' }],
      version: AGENT_VERSION,
      capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: [...INPUT_MODES],
      defaultOutputModes: [...OUTPUT_MODES],
      skills: [skill10(SKILL)],
      signatures: [],
    };
    return [card, { ...card, skills: [skill10(SKILL), skill10(EXTENDED_SKILL)] }];
  }
  card = {
    name: AGENT_NAME,
    description: AGENT_DESCRIPTION,
    url,
    version: AGENT_VERSION,
    protocolVersion: '0.3.0',
    preferredTransport: binding,
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: [...INPUT_MODES],
    defaultOutputModes: [...OUTPUT_MODES],
    skills: [SKILL],
    supportsAuthenticatedExtendedCard: true,
  };
  return [card, { ...card, skills: [SKILL, EXTENDED_SKILL] }];
}

function requestHandler(card, extended) {
  const push = new server.InMemoryPushNotificationStore();
  const sender = new server.DefaultPushNotificationSender(push, { timeout: 10_000 });
  // A function provider: an object one is only handed to authenticated users.
  const extendedProvider = async () => extended;
  const common = [card, new server.InMemoryTaskStore(), new InteropExecutor(), new server.DefaultExecutionEventBusManager(), push, sender, extendedProvider];
  // 1.0: input modes are not validated (refusing an undeclared media type is the bridge's job).
  return V10
    ? new server.DefaultRequestHandler(...common, undefined, { validateInputModes: false })
    : new server.DefaultRequestHandler(...common);
}

// --- serving -----------------------------------------------------------------------------------

const app = express();
// Every request target as it arrived, before any routing: what the hostile rows read back.
app.use((req, _res, next) => {
  process.stdout.write(`REQUEST ${req.method} ${req.originalUrl}\n`);
  next();
});
const http = await new Promise((resolve, reject) => {
  const s = app.listen(PORT, '127.0.0.1', (err) => (err ? reject(err) : resolve(s)));
});
const base = `http://127.0.0.1:${http.address().port}/`;
const userBuilder = expressApi.UserBuilder.noAuthentication;
let grpcServer;

if (BINDING === 'grpc') {
  const grpcApi = await import(`${pkg}/server/grpc`);
  // With a maximum connection age, grpc-js ends each connection that old with a GOAWAY, letting
  // the calls it took finish within the grace period.
  const options = MAX_AGE_MS > 0 ? { 'grpc.max_connection_age_ms': MAX_AGE_MS, 'grpc.max_connection_age_grace_ms': 10_000 } : {};
  grpcServer = new grpc.Server(options);
  const grpcPort = await new Promise((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
  const [card, extended] = buildCards(`127.0.0.1:${grpcPort}`, 'GRPC');
  const handler = requestHandler(card, extended);
  grpcServer.addService(grpcApi.A2AService, grpcApi.grpcService({ requestHandler: handler, userBuilder: grpcApi.UserBuilder.noAuthentication }));
  app.use('/.well-known/agent-card.json', expressApi.agentCardHandler({ agentCardProvider: handler }));
} else {
  const rest = BINDING === 'rest';
  // HTTP+JSON clients append their routes to the interface URL: the base without a slash.
  const [card, extended] = buildCards(rest ? base.replace(/\/$/, '') : base, rest ? 'HTTP+JSON' : 'JSONRPC');
  const handler = requestHandler(card, extended);
  app.use('/.well-known/agent-card.json', expressApi.agentCardHandler({ agentCardProvider: handler }));
  app.use('/', (rest ? expressApi.restHandler : expressApi.jsonRpcHandler)({ requestHandler: handler, userBuilder }));
}

function shutdown() {
  grpcServer?.forceShutdown();
  http.closeAllConnections();
  http.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

process.stdout.write(`READY ${base}\n`);
