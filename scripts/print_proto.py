"""Prints a .proto source for a compiled FileDescriptorProto (wire-relevant content: messages,
fields and numbers, oneofs, proto3 optional, enums, services, json names, google.api.http
rules, field_behavior, method_signature). Comments are not in a descriptor."""
import sys
from google.protobuf import descriptor_pb2
from google.api import annotations_pb2, field_behavior_pb2, client_pb2, http_pb2

T = descriptor_pb2.FieldDescriptorProto
SCALAR = {T.TYPE_DOUBLE: 'double', T.TYPE_FLOAT: 'float', T.TYPE_INT64: 'int64', T.TYPE_UINT64: 'uint64',
          T.TYPE_INT32: 'int32', T.TYPE_FIXED64: 'fixed64', T.TYPE_FIXED32: 'fixed32', T.TYPE_BOOL: 'bool',
          T.TYPE_STRING: 'string', T.TYPE_BYTES: 'bytes', T.TYPE_UINT32: 'uint32', T.TYPE_SFIXED32: 'sfixed32',
          T.TYPE_SFIXED64: 'sfixed64', T.TYPE_SINT32: 'sint32', T.TYPE_SINT64: 'sint64'}
BEHAVIOR = {v: k for k, v in field_behavior_pb2.FieldBehavior.items()}

def camel(name):
    parts = name.split('_')
    return parts[0] + ''.join(p[:1].upper() + p[1:] for p in parts[1:])

def type_name(f, package):
    if f.type in SCALAR:
        return SCALAR[f.type]
    name = f.type_name.lstrip('.')
    if name.startswith(package + '.'):
        name = name[len(package) + 1:]
    return name

def field_options(f):
    opts = []
    if f.json_name and f.json_name != camel(f.name):
        opts.append(f'json_name = "{f.json_name}"')
    behaviors = f.options.Extensions[field_behavior_pb2.field_behavior]
    for b in behaviors:
        opts.append(f'(google.api.field_behavior) = {BEHAVIOR[b]}')
    if f.options.HasField('deprecated') and f.options.deprecated:
        opts.append('deprecated = true')
    return f" [{', '.join(opts)}]" if opts else ''

def print_field(f, package, indent, map_entries, in_oneof=False):
    label = ''
    if f.label == T.LABEL_REPEATED:
        entry = map_entries.get(f.type_name)
        if entry:
            k, v = entry.field[0], entry.field[1]
            return f"{indent}map<{type_name(k, package)}, {type_name(v, package)}> {f.name} = {f.number}{field_options(f)};"
        label = 'repeated '
    elif f.proto3_optional:
        label = 'optional '
    return f"{indent}{label}{type_name(f, package)} {f.name} = {f.number}{field_options(f)};"

def print_enum(e, indent):
    out = [f"{indent}enum {e.name} {{"]
    for v in e.value:
        out.append(f"{indent}  {v.name} = {v.number};")
    out.append(f"{indent}}}")
    return out

def print_message(m, package, indent, prefix):
    out = [f"{indent}message {m.name} {{"]
    map_entries = {}
    full = f".{prefix}.{m.name}"
    for n in m.nested_type:
        if n.options.map_entry:
            map_entries[f"{full}.{n.name}"] = n
    for e in m.enum_type:
        out += print_enum(e, indent + '  ')
    for n in m.nested_type:
        if not n.options.map_entry:
            out += print_message(n, package, indent + '  ', f"{prefix}.{m.name}")
    real_oneofs = {}
    for f in m.field:
        if f.HasField('oneof_index') and not f.proto3_optional:
            real_oneofs.setdefault(f.oneof_index, []).append(f)
    done = set()
    for f in m.field:
        if f.HasField('oneof_index') and not f.proto3_optional:
            if f.oneof_index in done:
                continue
            done.add(f.oneof_index)
            out.append(f"{indent}  oneof {m.oneof_decl[f.oneof_index].name} {{")
            for g in real_oneofs[f.oneof_index]:
                out.append(print_field(g, package, indent + '    ', map_entries, True))
            out.append(f"{indent}  }}")
        else:
            out.append(print_field(f, package, indent + '  ', map_entries))
    out.append(f"{indent}}}")
    return out

def http_rule(rule, indent):
    out = []
    for verb in ('get', 'put', 'post', 'delete', 'patch'):
        if rule.HasField(verb):
            out.append(f'{indent}{verb}: "{getattr(rule, verb)}"')
    if rule.body:
        out.append(f'{indent}body: "{rule.body}"')
    for extra in rule.additional_bindings:
        out.append(f'{indent}additional_bindings {{')
        out += http_rule(extra, indent + '  ')
        out.append(f'{indent}}}')
    return out

def main(module, out_path, source_note):
    mod = __import__(module, fromlist=['DESCRIPTOR'])
    fdp = descriptor_pb2.FileDescriptorProto()
    mod.DESCRIPTOR.CopyToProto(fdp)
    # CopyToProto drops json_name unless present in serialized form; re-read from serialized.
    fdp.ParseFromString(mod.DESCRIPTOR.serialized_pb)
    package = fdp.package
    lines = [f'// {l}' for l in source_note.splitlines()]
    lines += ['', f'syntax = "{fdp.syntax or "proto2"}";', '', f'package {package};', '']
    for dep in fdp.dependency:
        lines.append(f'import "{dep}";')
    lines.append('')
    o = fdp.options
    for name in ('csharp_namespace', 'go_package', 'java_package', 'java_outer_classname', 'objc_class_prefix'):
        if o.HasField(name):
            lines.append(f'option {name} = "{getattr(o, name)}";')
    if o.HasField('java_multiple_files'):
        lines.append(f'option java_multiple_files = {str(o.java_multiple_files).lower()};')
    lines.append('')
    for s in fdp.service:
        lines.append(f'service {s.name} {{')
        for m in s.method:
            ins = type_name(descriptor_pb2.FieldDescriptorProto(type_name=m.input_type, type=T.TYPE_MESSAGE), package)
            outs = type_name(descriptor_pb2.FieldDescriptorProto(type_name=m.output_type, type=T.TYPE_MESSAGE), package)
            stream = 'stream ' if m.server_streaming else ''
            lines.append(f'  rpc {m.name}({ins}) returns ({stream}{outs}) {{')
            rule = m.options.Extensions[annotations_pb2.http]
            if rule.ByteSize():
                lines.append('    option (google.api.http) = {')
                lines += http_rule(rule, '      ')
                lines.append('    };')
            for sig in m.options.Extensions[client_pb2.method_signature]:
                lines.append(f'    option (google.api.method_signature) = "{sig}";')
            lines.append('  }')
        lines.append('}')
        lines.append('')
    for m in fdp.message_type:
        lines += print_message(m, package, '', package)
        lines.append('')
    for e in fdp.enum_type:
        lines += print_enum(e, '')
        lines.append('')
    open(out_path, 'w').write('\n'.join(lines))

if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2], sys.argv[3])
