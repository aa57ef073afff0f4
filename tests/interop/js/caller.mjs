// An A2A caller built on the official JS SDK (@a2a-js/sdk 0.3 or 1.x), driven line by line.
//
//   node caller.mjs --sdk 0.3|1.0 --binding jsonrpc|rest|grpc --url URL
//
// Prints READY once the client is built. Then reads one JSON request per stdin line and writes
// one JSON answer per stdout line; requests run concurrently, answers carry the request id:
//   send   {id, op, text, blocking, taskId, contextId} -> {id, ok, result: task R | message R}
//   get    {id, op, taskId}                           -> {id, ok, result: task R}
//   cancel {id, op, taskId}                           -> {id, ok, result: task R}
//   stream {id, op, text[, taskId, contextId]}        -> {id, event: E}* then {id, done: true}
//   resubscribe {id, op, taskId}                       -> {id, event: E}* then {id, done: true}
//   abort  {id, op}       (id of a running stream)    -> {id, done: true, aborted: true}
//          (nothing if that stream already ended; an UnknownStream error for an unseen id)
//   push   {id, op, taskId, url, token, configId}     -> {id, ok, result: {url, token, id}}
//   list   {id, op, pageSize}            (1.0 only)   -> {id, ok, result: {tasks: [R...]}}
// A failure answers {id, ok: false, error: {name, message, code}} (for a stream, instead of done).
// Task R = {type: 'task', id, contextId, state, artifacts: {name or artifactId: text}};
// message R = {type: 'message', text}; event E = {kind, taskId, state, final, text}.
// Every request may carry `target`: the URL (gRPC: host:port) to call instead of `--url`,
// optionally followed by `#tenant=NAME` (1.0: the card's interface names that tenant); one
// client is kept per target. Exits when stdin closes.

import readline from 'node:readline';
import { randomUUID } from 'node:crypto';

// stdout carries the protocol only.
console.log = console.info = console.debug = console.error;

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--')) out[argv[i].slice(2)] = argv[++i];
  }
  return out;
}

const args = parseArgs(process.argv.slice(2));
const SDK = args.sdk;
const BINDING = args.binding;
const URL_ = args.url;
if (!['0.3', '1.0'].includes(SDK) || !['jsonrpc', 'rest', 'grpc'].includes(BINDING) || !URL_) {
  process.stderr.write('usage: node caller.mjs --sdk 0.3|1.0 --binding jsonrpc|rest|grpc --url URL\n');
  process.exit(2);
}

function write(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// HTTP status of the last response fetched under each request's AbortSignal.
const httpStatus = new WeakMap();
async function recordingFetch(input, init) {
  const response = await fetch(input, init);
  if (init?.signal) httpStatus.set(init.signal, response.status);
  return response;
}

// ---- client construction: one transport factory, a card naming only URL_ in that binding ----

// One client per target URL (`--url`, or a request's `target`), built on first use.
const clients = new Map();
function clientFor(target) {
  const key = target ?? URL_;
  if (!clients.has(key)) {
    const [url, tenant] = key.split('#tenant=');
    clients.set(key, buildClient(url, tenant));
  }
  return clients.get(key);
}
let v10; // the 1.0 SDK's root module (message builders), when SDK is 1.0

async function buildClient(URL_, tenant) {
  if (SDK === '0.3') {
    const c = await import('a2a-js-03/client');
    let factory;
    if (BINDING === 'grpc') factory = new (await import('a2a-js-03/client/grpc')).GrpcTransportFactory();
    else if (BINDING === 'rest') factory = new c.RestTransportFactory({ fetchImpl: recordingFetch });
    else factory = new c.JsonRpcTransportFactory({ fetchImpl: recordingFetch });
    const transport = factory.protocolName;
    const card = {
      name: 'interop target',
      description: 'card built in-process by caller.mjs',
      version: '0',
      protocolVersion: '0.3.0',
      url: URL_,
      preferredTransport: transport,
      additionalInterfaces: [{ url: URL_, transport }],
      capabilities: { streaming: true, pushNotifications: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [],
    };
    const cf = new c.ClientFactory({ transports: [factory], preferredTransports: [transport] });
    return cf.createFromAgentCard(card);
  }
  v10 = await import('a2a-js-10');
  const c = await import('a2a-js-10/client');
  let factory;
  if (BINDING === 'grpc') factory = new (await import('a2a-js-10/client/grpc')).GrpcTransportFactory();
  else if (BINDING === 'rest') factory = new c.RestTransportFactory({ fetchImpl: recordingFetch });
  else factory = new c.JsonRpcTransportFactory({ fetchImpl: recordingFetch });
  const protocolBinding = factory.protocolName;
  const card = v10.AgentCard.fromJSON({
    name: 'interop target',
    description: 'card built in-process by caller.mjs',
    version: '0',
    // A tenant the card names is copied into every call by the SDK's client (1.0 §8.3.2).
    supportedInterfaces: [{ url: URL_, protocolBinding, protocolVersion: '1.0', ...(tenant ? { tenant } : {}) }],
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  });
  const cf = new c.ClientFactory({ transports: [factory], preferredTransports: [protocolBinding] });
  return cf.createFromAgentCard(card);
}

// ---- normalisation ----

const STATE_BY_NUMBER = ['unknown', 'submitted', 'working', 'completed', 'failed', 'canceled',
  'input-required', 'rejected', 'auth-required'];
const STATES = new Set(STATE_BY_NUMBER);
const PAUSED_OR_DONE = new Set(['completed', 'canceled', 'failed', 'rejected', 'input-required', 'auth-required']);

function normState(s) {
  if (s === undefined || s === null) return 'unknown';
  if (typeof s === 'number') return STATE_BY_NUMBER[s] ?? 'unknown';
  let w = String(s).toLowerCase().replace(/^task_state_/, '').replace(/_/g, '-');
  if (w === 'cancelled') w = 'canceled';
  return STATES.has(w) ? w : 'unknown';
}

// Text of the text parts: 0.3 {kind: 'text', text}, 1.0 {content: {$case: 'text', value}}.
function partsText(parts) {
  let text = '';
  for (const p of parts ?? []) {
    if (p?.content?.$case === 'text') text += p.content.value;
    else if (typeof p?.text === 'string' && (p.kind === undefined || p.kind === 'text')) text += p.text;
  }
  return text;
}

function normTask(t) {
  const artifacts = {};
  for (const a of t?.artifacts ?? []) {
    const key = a.name || a.artifactId || '';
    artifacts[key] = (artifacts[key] ?? '') + partsText(a.parts);
  }
  return { type: 'task', id: t?.id ?? null, contextId: t?.contextId ?? null, state: normState(t?.status?.state), artifacts };
}

function isMessage(r) {
  return r?.kind === 'message' || (r?.kind === undefined && r && 'messageId' in r);
}

function normResult(r) {
  return isMessage(r) ? { type: 'message', text: partsText(r.parts) } : normTask(r);
}

// 0.3 events carry `kind`; 1.0 events are {payload: {$case, value}}. 1.0 status events have no
// `final` flag: final there (and for task events) means a terminal or interrupted state.
function normEvent(ev) {
  let kind; let v;
  if (ev?.payload?.$case) {
    v = ev.payload.value;
    kind = { task: 'task', message: 'message', statusUpdate: 'status', artifactUpdate: 'artifact' }[ev.payload.$case];
  } else {
    v = ev;
    kind = { task: 'task', message: 'message', 'status-update': 'status', 'artifact-update': 'artifact' }[ev?.kind];
  }
  switch (kind) {
    case 'task': {
      const state = normState(v.status?.state);
      return { kind, taskId: v.id ?? null, state, final: PAUSED_OR_DONE.has(state), text: '' };
    }
    case 'status': {
      const state = normState(v.status?.state);
      const final = typeof v.final === 'boolean' ? v.final : PAUSED_OR_DONE.has(state);
      return { kind, taskId: v.taskId ?? null, state, final, text: '' };
    }
    case 'artifact':
      return { kind, taskId: v.taskId ?? null, state: null, final: false, text: partsText(v.artifact?.parts) };
    case 'message':
      return { kind, taskId: v.taskId || null, state: null, final: true, text: partsText(v.parts) };
    default:
      return { kind: 'unknown', taskId: null, state: null, final: false, text: JSON.stringify(ev ?? null) };
  }
}

// ---- errors ----

// gRPC status behind each error class the 0.3 gRPC transport maps a status to (it drops the code).
const GRPC03_STATUS = {
  TaskNotFoundError: 5,
  TaskNotCancelableError: 9,
  AuthenticatedExtendedCardNotConfiguredError: 9,
  PushNotificationNotSupportedError: 12,
  UnsupportedOperationError: 12,
};

function errorChain(err) {
  const chain = [];
  for (let e = err; e && typeof e === 'object' && chain.length < 8; e = e.cause) chain.push(e);
  return chain;
}

function errorCode(err, signal) {
  const chain = errorChain(err);
  const num = (x) => (typeof x === 'number' && Number.isFinite(x) ? x : null);
  const http = signal ? httpStatus.get(signal) : undefined;
  if (BINDING === 'jsonrpc') {
    for (const e of chain) {
      const c = num(e.errorResponse?.error?.code) ?? num(e.envelopeCode);
      if (c !== null) return c;
    }
    const m = /\(Code: (-?\d+)\)/.exec(String(err?.message));
    if (m) return Number(m[1]);
    return http !== undefined && http >= 400 ? http : null;
  }
  if (BINDING === 'rest') {
    for (const e of chain) if (num(e.statusCode) !== null) return e.statusCode;
    return http !== undefined && http >= 400 ? http : null;
  }
  for (const e of chain) {
    if (e.transport === 'grpc' && num(e.status) !== null) return e.status;
    if (num(e.code) !== null) return e.code;
  }
  if (SDK === '0.3' && err && GRPC03_STATUS[err.name] !== undefined) return GRPC03_STATUS[err.name];
  const m = /GRPC error for \w+! (\d+) /.exec(String(err?.message));
  return m ? Number(m[1]) : null;
}

// The error's own name, or that of the A2A error it wraps (an SSE error event is a plain Error
// whose cause is the A2A error).
function errorName(err) {
  const chain = errorChain(err);
  if (chain.length === 0) return typeof err;
  const nameOf = (e) => (e.name && e.name !== 'Error' ? e.name : e.constructor?.name || 'Error');
  const isA2A = (e) => e.errorResponse !== undefined || e.envelopeCode !== undefined || e.reason !== undefined;
  const inner = chain.slice(1).find(isA2A);
  return nameOf(nameOf(chain[0]) === 'Error' && inner ? inner : chain[0]);
}

function errorAnswer(id, err, signal) {
  let code = null;
  try { code = errorCode(err, signal); } catch { /* keep null */ }
  // The SDK's text, and the server's own message where the SDK replaced it with a default.
  const said = errorChain(err).map((e) => e.errorResponse?.error?.message).find((m) => typeof m === 'string');
  const text = String(err?.message ?? err);
  const message = said && !text.includes(said) ? `${text} | ${said}` : text;
  return { id, ok: false, error: { name: errorName(err), message, code } };
}

class UnsupportedBySdk extends Error {
  constructor(message) { super(message); this.name = 'UnsupportedBySdk'; }
}

// ---- requests ----

function sendParams(text, { blocking = true, taskId = null, contextId = null } = {}) {
  if (SDK === '0.3') {
    const message = { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] };
    if (taskId) message.taskId = taskId;
    if (contextId) message.contextId = contextId;
    return { message, configuration: { blocking } };
  }
  const message = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] };
  if (taskId) message.taskId = taskId;
  if (contextId) message.contextId = contextId;
  return v10.SendMessageRequest.fromJSON({ message, configuration: { returnImmediately: !blocking } });
}

async function runOp(req, signal) {
  const options = { signal };
  const client = await clientFor(req.target);
  switch (req.op) {
    case 'send': {
      const p = sendParams(String(req.text ?? ''), { blocking: req.blocking !== false, taskId: req.taskId, contextId: req.contextId });
      return normResult(await client.sendMessage(p, options));
    }
    case 'get': {
      const p = SDK === '0.3' ? { id: req.taskId } : v10.GetTaskRequest.fromJSON({ id: req.taskId });
      return normTask(await client.getTask(p, options));
    }
    case 'cancel': {
      const p = SDK === '0.3' ? { id: req.taskId } : v10.CancelTaskRequest.fromJSON({ id: req.taskId });
      return normTask(await client.cancelTask(p, options));
    }
    case 'push': {
      if (SDK === '0.3') {
        const config = { url: req.url };
        if (req.token != null) config.token = req.token;
        if (req.configId != null) config.id = req.configId;
        const r = await client.setTaskPushNotificationConfig({ taskId: req.taskId, pushNotificationConfig: config }, options);
        const c = r?.pushNotificationConfig ?? {};
        return { url: c.url ?? null, token: c.token ?? null, id: c.id ?? null };
      }
      const json = { taskId: req.taskId, url: req.url };
      if (req.token != null) json.token = req.token;
      if (req.configId != null) json.id = req.configId;
      const r = await client.createTaskPushNotificationConfig(v10.TaskPushNotificationConfig.fromJSON(json), options);
      return { url: r?.url ?? null, token: r?.token ?? null, id: r?.id ?? null };
    }
    case 'list': {
      if (SDK === '0.3') throw new UnsupportedBySdk('listTasks does not exist in @a2a-js/sdk 0.3 (A2A 0.3 has no tasks/list)');
      const json = {};
      if (req.pageSize != null) json.pageSize = req.pageSize;
      const r = await client.listTasks(v10.ListTasksRequest.fromJSON(json), options);
      return { tasks: (r?.tasks ?? []).map(normTask) };
    }
    default:
      throw new Error(`unknown op: ${JSON.stringify(req.op)}`);
  }
}

const streams = new Map(); // id -> {ctrl, aborted, ended}
const finishedStreams = new Set();

async function runStream(id, text, taskId, contextId, target) {
  return runEvents(id, target, (client, signal) =>
    client.sendMessageStream(sendParams(text, { taskId, contextId }), { signal }));
}

async function runResubscribe(id, taskId, target) {
  return runEvents(id, target, (client, signal) => {
    const params = SDK === '0.3' ? { id: taskId } : v10.SubscribeToTaskRequest.fromJSON({ id: taskId });
    return client.resubscribeTask(params, { signal });
  });
}

async function runEvents(id, target, open) {
  const ctrl = new AbortController();
  let endedResolve;
  const entry = { ctrl, aborted: false, ended: new Promise((r) => { endedResolve = r; }) };
  streams.set(id, entry);
  try {
    const client = await clientFor(target);
    for await (const ev of open(client, ctrl.signal)) {
      if (entry.aborted) break;
      write({ id, event: normEvent(ev) });
    }
    if (!entry.aborted) write({ id, done: true });
  } catch (err) {
    if (!entry.aborted) write(errorAnswer(id, err, ctrl.signal));
  } finally {
    streams.delete(id);
    finishedStreams.add(id);
    endedResolve();
  }
}

async function abortStream(id) {
  const entry = streams.get(id);
  if (!entry) {
    if (!finishedStreams.has(id)) write({ id, ok: false, error: { name: 'UnknownStream', message: `no stream with id ${id}`, code: null } });
    return; // a stream that already ended has had its last line
  }
  if (entry.aborted) return;
  entry.aborted = true;
  entry.ctrl.abort();
  // Let the transport close the call before answering; don't wait on it for long.
  await Promise.race([entry.ended, new Promise((r) => setTimeout(r, 2000))]);
  write({ id, done: true, aborted: true });
}

async function handleLine(line) {
  if (!line.trim()) return;
  let req;
  try {
    req = JSON.parse(line);
  } catch (err) {
    write({ id: null, ok: false, error: { name: 'BadRequest', message: `not JSON: ${String(err.message)}`, code: null } });
    return;
  }
  const id = req?.id ?? null;
  if (req?.op === 'stream') return runStream(id, String(req.text ?? ''), req.taskId, req.contextId, req.target);
  if (req?.op === 'resubscribe') return runResubscribe(id, String(req.taskId ?? ''), req.target);
  if (req?.op === 'abort') return abortStream(id);
  const ctrl = new AbortController();
  try {
    write({ id, ok: true, result: await runOp(req, ctrl.signal) });
  } catch (err) {
    write(errorAnswer(id, err, ctrl.signal));
  }
}

process.on('unhandledRejection', (err) => process.stderr.write(`caller.mjs: unhandled rejection: ${err?.stack ?? err}\n`));
process.on('uncaughtException', (err) => process.stderr.write(`caller.mjs: uncaught exception: ${err?.stack ?? err}\n`));

try {
  await clientFor(URL_);
} catch (err) {
  process.stderr.write(`caller.mjs: cannot build the client: ${err?.stack ?? err}\n`);
  process.exit(1);
}
process.stdout.write('READY\n');

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => { handleLine(line).catch((err) => process.stderr.write(`caller.mjs: ${err?.stack ?? err}\n`)); });
rl.on('close', () => process.exit(0));
