// A client nobody here wrote: the official MCP TypeScript SDK (pinned in
// testdata/npm), driven by the Go tests in sdkclient_test.go.
//
// Usage: node sdkclient.mjs PLAN, where PLAN is JSON:
//
//   {"transport": "stdio", "command": "...", "args": [...], "env": {...}}
//   {"transport": "http", "url": "http://.../mcp", "token": "..."}
//
// plus "steps", run in order in one session, each printing one JSON line:
//
//   {"op": "list"}                      → {"op", "tools": [{name, hasOutputSchema, title, icon}]}
//                                          (icon: the first icon's src)
//   {"op": "call", "name", "arguments"} → {"op", "isError", "structuredContent", "text"}
//   {"op": "progress", "name", "arguments"} → {"op": "progress-event", "progress": [one]} per
//                                              notification as it comes, then the call's line
//                                              plus "progress": [{progress, total, message}, …]
//   {"op": "cancel", "name", "arguments"}   → prints {"op": "cancel", "started": true}, waits for a
//                                              line "abort" on stdin, aborts, then {"op", "aborted", "error"}
//
//   {"op": "prompts"}                   → {"op", "prompts": [{name, title, icon, arguments: [names]}]}
//   {"op": "getPrompt", "name", "arguments"} → {"op", "text"} (the messages' text)
//   {"op": "complete", "ref", "argument", "context"} → {"op", "values"}
//   {"op": "resources"} / {"op": "templates"} → {"op", "resources", "listChanged"} / {"op", "templates"}
//                                          (listChanged: the notifications seen so far)
//   {"op": "read", "uri"}               → {"op", "contents": [{uri, mimeType, text}]}
//   {"op": "listChanged"}               → waits for a notifications/resources/list_changed
//                                          since the session began (60s at most, then an error),
//                                          then {"op", "listChanged": count}
//   {"op": "wait"}                      → prints {"op": "wait"}, then waits for a line "go" on stdin
//                                          (the test acts on the server meanwhile, in the open session)
//
// Strings in a step may name "${key}", replaced by that string field of an
// earlier call's structuredContent (a stored playlist's playlistId).
//
// With "elicit": "accept" or "decline" in the plan, the client declares the
// elicitation capability and answers every request so (accept confirms);
// each call's line then has "elicited": the messages asked since the last.
//
// A step that throws prints {"op", "error"} and the next step still runs, so
// the Go test sees every failure at once. The process exits 0 unless the
// connection itself failed.
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const plan = JSON.parse(process.argv[2]);
const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');

// stdin lines, read as the test writes them.
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

let transport;
if (plan.transport === 'stdio') {
  transport = new StdioClientTransport({
    command: plan.command,
    args: plan.args ?? [],
    // The SDK passes only a few variables (HOME, PATH, …) by default; the
    // server also needs the test's upstreams.
    env: { ...getDefaultEnvironment(), ...(plan.env ?? {}) },
    stderr: 'inherit',
  });
} else {
  transport = new StreamableHTTPClientTransport(new URL(plan.url), {
    requestInit: plan.token ? { headers: { Authorization: `Bearer ${plan.token}` } } : undefined,
  });
}

const client = new Client(
  { name: 'toolport-ts-sdk-test', version: '0.0.0' },
  { capabilities: plan.elicit ? { elicitation: { form: {} } } : {} },
);
let elicited = [];
if (plan.elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicited.push(req.params.message);
    return plan.elicit === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
  });
}
// Registered before connecting, so that no notification can come first.
let listChanged = 0;
let onListChanged = () => {};
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
  listChanged++;
  onListChanged();
});
const vars = {};
const subst = (v) =>
  typeof v === 'string' ? v.replace(/\$\{(\w+)\}/g, (m, k) => (k in vars ? vars[k] : m))
  : Array.isArray(v) ? v.map(subst)
  : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, subst(x)]))
  : v;
await client.connect(transport);
out({ op: 'connected', server: client.getServerVersion(), protocolVersion: transport.protocolVersion ?? null });

function summarize(op, res) {
  const text = (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  for (const [k, v] of Object.entries(res.structuredContent ?? {})) if (typeof v === 'string') vars[k] = v;
  const line = { op, isError: res.isError === true, structuredContent: res.structuredContent ?? null, text };
  if (plan.elicit) line.elicited = elicited.splice(0);
  return line;
}

for (const raw of plan.steps) {
  const step = subst(raw);
  try {
    switch (step.op) {
      case 'list': {
        const { tools } = await client.listTools();
        out({ op: 'list', tools: tools.map((t) => ({ name: t.name, hasOutputSchema: !!t.outputSchema, title: t.title ?? '', icon: t.icons?.[0]?.src ?? '' })) });
        break;
      }
      case 'prompts': {
        const { prompts } = await client.listPrompts();
        out({ op: 'prompts', prompts: prompts.map((p) => ({ name: p.name, title: p.title ?? '', icon: p.icons?.[0]?.src ?? '', arguments: (p.arguments ?? []).map((a) => a.name) })) });
        break;
      }
      case 'getPrompt': {
        const res = await client.getPrompt({ name: step.name, arguments: step.arguments });
        out({ op: 'getPrompt', text: res.messages.map((m) => (m.content.type === 'text' ? m.content.text : '')).join('\n') });
        break;
      }
      case 'complete': {
        const res = await client.complete({ ref: step.ref, argument: step.argument, context: step.context });
        out({ op: 'complete', values: res.completion.values });
        break;
      }
      case 'resources': {
        const { resources } = await client.listResources();
        out({ op: 'resources', resources: resources.map((r) => ({ uri: r.uri, title: r.title ?? '', mimeType: r.mimeType ?? '' })), listChanged });
        break;
      }
      case 'templates': {
        const { resourceTemplates } = await client.listResourceTemplates();
        out({ op: 'templates', templates: resourceTemplates.map((r) => r.uriTemplate) });
        break;
      }
      case 'read': {
        const { contents } = await client.readResource({ uri: step.uri });
        out({ op: 'read', contents: contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType ?? '', text: c.text ?? '' })) });
        break;
      }
      case 'listChanged': {
        // Bounded, so that a notification that never comes is this step's
        // error rather than the whole client's timeout.
        if (listChanged === 0) {
          await new Promise((resolve, reject) => {
            onListChanged = resolve;
            setTimeout(() => reject(new Error('no notifications/resources/list_changed within 60s')), 60_000).unref();
          });
        }
        out({ op: 'listChanged', listChanged });
        break;
      }
      case 'wait': {
        out({ op: 'wait' });
        const line = await lines.next();
        if (line.done || line.value.trim() !== 'go') throw new Error(`expected "go" on stdin, got ${JSON.stringify(line.value)}`);
        break;
      }
      case 'call': {
        const res = await client.callTool({ name: step.name, arguments: step.arguments });
        out(summarize('call', res));
        break;
      }
      case 'progress': {
        // Each notification is printed as it arrives, so that the test can
        // hold the tool's upstream until the client has seen the first.
        const progress = [];
        const res = await client.callTool({ name: step.name, arguments: step.arguments }, undefined, {
          onprogress: (p) => {
            const e = { progress: p.progress, total: p.total ?? null, message: p.message ?? null };
            progress.push(e);
            out({ op: 'progress-event', progress: [e] });
          },
        });
        out({ ...summarize('progress', res), progress });
        break;
      }
      case 'cancel': {
        const ac = new AbortController();
        const call = client.callTool({ name: step.name, arguments: step.arguments }, undefined, { signal: ac.signal });
        // Caught now so that its rejection, which comes after the abort, is
        // never unhandled.
        const settled = call.then((res) => ({ res }), (err) => ({ err }));
        out({ op: 'cancel', started: true });
        const line = await lines.next();
        if (line.done || line.value.trim() !== 'abort') throw new Error(`expected "abort" on stdin, got ${JSON.stringify(line.value)}`);
        ac.abort(new Error('cancelled by the test'));
        const { res, err } = await settled;
        out(err ? { op: 'cancel', aborted: true, error: String(err?.message ?? err) } : { ...summarize('cancel', res), aborted: false });
        break;
      }
      default:
        throw new Error(`unknown step ${step.op}`);
    }
  } catch (err) {
    out({ op: step.op, error: String(err?.message ?? err) });
  }
}
await client.close();
process.exit(0);
