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
//   {"op": "list"}                      → {"op", "tools": [{name, hasOutputSchema}]}
//   {"op": "call", "name", "arguments"} → {"op", "isError", "structuredContent", "text"}
//   {"op": "progress", "name", "arguments"} → {"op": "progress-event", "progress": [one]} per
//                                              notification as it comes, then the call's line
//                                              plus "progress": [{progress, total, message}, …]
//   {"op": "cancel", "name", "arguments"}   → prints {"op": "cancel", "started": true}, waits for a
//                                              line "abort" on stdin, aborts, then {"op", "aborted", "error"}
//
// A step that throws prints {"op", "error"} and the next step still runs, so
// the Go test sees every failure at once. The process exits 0 unless the
// connection itself failed.
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

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

const client = new Client({ name: 'toolport-ts-sdk-test', version: '0.0.0' });
await client.connect(transport);
out({ op: 'connected', server: client.getServerVersion(), protocolVersion: transport.protocolVersion ?? null });

function summarize(op, res) {
  const text = (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  return { op, isError: res.isError === true, structuredContent: res.structuredContent ?? null, text };
}

for (const step of plan.steps) {
  try {
    switch (step.op) {
      case 'list': {
        const { tools } = await client.listTools();
        out({ op: 'list', tools: tools.map((t) => ({ name: t.name, hasOutputSchema: !!t.outputSchema })) });
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
