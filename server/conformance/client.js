// Drives `faultline serve` over stdio with Microsoft's LSP client library
// (vscode-languageserver-protocol, pinned in package.json) through the flow
// an editor runs: initialize → faultline.open → diagnostics → code lenses →
// hover → inlay hints → call hierarchy → workspace symbols →
// faultline/threads → shutdown → exit, and checks the exit code is 0.
//
//   node client.js FAULTLINE_BINARY TESTDATA_NATIVE_DIR
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const rpc = require('vscode-languageserver-protocol/node');

const [bin, dir] = process.argv.slice(2);
if (!bin || !dir) {
  console.error('usage: node client.js FAULTLINE_BINARY TESTDATA_NATIVE_DIR');
  process.exit(2);
}

function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exit(1);
}

function check(cond, msg) {
  if (!cond) fail(msg);
  console.log('ok   ' + msg);
}

const overall = setTimeout(() => fail('timed out after 120 s'), 120000);

async function main() {
  const server = spawn(bin, ['serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => server.on('exit', (code) => resolve(code)));

  const conn = rpc.createProtocolConnection(
    new rpc.StreamMessageReader(server.stdout),
    new rpc.StreamMessageWriter(server.stdin));

  const src = pathToFileURL(path.join(dir, 'null_inline.cpp')).href;
  const diagnostics = new Map();
  const waiters = [];
  const progressKinds = [];
  const shown = [];
  conn.onNotification(rpc.PublishDiagnosticsNotification.type, (p) => {
    diagnostics.set(p.uri, p.diagnostics);
    for (const w of waiters.splice(0)) w();
  });
  conn.onNotification(rpc.ShowMessageNotification.type, (p) => console.log('showMessage: ' + p.message));
  conn.onProgress(rpc.WorkDoneProgress.type, 'faultline-open', (v) => progressKinds.push(v.kind));
  conn.onRequest(rpc.WorkDoneProgressCreateRequest.type, () => null);
  conn.onRequest(rpc.ShowDocumentRequest.type, (p) => { shown.push(p); return { success: true }; });
  conn.onRequest(rpc.CodeLensRefreshRequest.type, () => null);
  conn.onRequest(rpc.InlayHintRefreshRequest.type, () => null);
  conn.listen();

  const init = await conn.sendRequest(rpc.InitializeRequest.type, {
    processId: process.pid,
    rootUri: pathToFileURL(dir).href,
    workspaceFolders: [{ uri: pathToFileURL(dir).href, name: 'native' }],
    capabilities: {
      window: { workDoneProgress: true, showDocument: { support: true } },
      workspace: { codeLens: { refreshSupport: true }, inlayHint: { refreshSupport: true } },
    },
    initializationOptions: { sourceMap: {}, offline: true },
  });
  const cmds = init.capabilities.executeCommandProvider.commands;
  check(['faultline.open', 'faultline.close', 'faultline.selectThread', 'faultline.report', 'faultline.fetchSources', 'faultline.showCommit'].every((c) => cmds.includes(c)),
    'initialize advertises the faultline commands: ' + cmds.join(', '));
  check(init.capabilities.hoverProvider && init.capabilities.codeLensProvider && init.capabilities.inlayHintProvider &&
    init.capabilities.callHierarchyProvider && init.capabilities.workspaceSymbolProvider, 'initialize advertises the providers');
  await conn.sendNotification(rpc.InitializedNotification.type, {});

  const sum = await conn.sendRequest(rpc.ExecuteCommandRequest.type, {
    command: 'faultline.open',
    workDoneToken: 'faultline-open',
    arguments: [{ dump: path.join(dir, 'cores/null_inline.core.gz'), exe: path.join(dir, 'bin/null_inline') }],
  });
  check(sum.signal === 'SIGSEGV' && sum.function === 'value_of' && sum.line === 16 && sum.uri === src,
    'faultline.open returns the signal and the culprit location: ' + JSON.stringify(sum));
  check(progressKinds[0] === 'begin' && progressKinds[progressKinds.length - 1] === 'end',
    '$/progress on the request\'s workDoneToken: ' + progressKinds.join(' '));

  while (!(diagnostics.get(src) || []).some((d) => d.severity === rpc.DiagnosticSeverity.Error)) {
    await new Promise((resolve) => waiters.push(resolve));
  }
  const diags = diagnostics.get(src);
  const err = diags.find((d) => d.severity === rpc.DiagnosticSeverity.Error);
  // What happened first (the classification's summary), then the signal's detail.
  const [what, detail] = err.message.split('\n');
  check(err.range.start.line === 15 && err.source === 'faultline' &&
    /^NULL pointer dereference in value_of \(null_inline\.cpp:16\)/.test(what) &&
    detail === `SIGSEGV: NULL pointer read at 0x8 in value_of — thread ${sum.thread}, frame #0`,
  'Error diagnostic on the faulting line: ' + JSON.stringify(err.message));
  check(diags.length === 5 && err.relatedInformation.length === 4, 'one diagnostic per frame line, the chain in relatedInformation');

  const doc = { uri: src };
  const lenses = await conn.sendRequest(rpc.CodeLensRequest.type, { textDocument: doc });
  const onCulprit = lenses.filter((l) => l.range.start.line === 15).map((l) => l.command.title);
  check(onCulprit.includes(`⚡ #0 value_of · thread ${sum.thread}`) && onCulprit.includes('↑ caller #1 next_value'),
    'code lenses on the culprit line: ' + onCulprit.join(' | '));
  const callee = lenses.find((l) => l.range.start.line === 33 && l.command.title.startsWith('↓'));
  await conn.sendRequest(rpc.ExecuteCommandRequest.type, callee.command);
  check(shown.length === 1 && shown[0].uri === src && shown[0].selection.start.line === 24,
    'the callee lens shows sum_prefix\'s line with window/showDocument');

  const hover = await conn.sendRequest(rpc.HoverRequest.type, { textDocument: doc, position: { line: 15, character: 50 } });
  check(hover.contents.kind === 'markdown' && hover.contents.value.includes('**Disassembly**') &&
    hover.contents.value.includes('=> 0x') && hover.contents.value.includes('rdi'),
  'hover with registers and disassembly on the culprit line');

  const hints = await conn.sendRequest(rpc.InlayHintRequest.type, {
    textDocument: doc, range: { start: { line: 0, character: 0 }, end: { line: 40, character: 0 } },
  });
  check(hints.length === 2 && hints[0].label === 'read 0x8 via 0x8(%rdi): rdi = 0x0' && hints[1].label === 'value_of(n = <optimized out>)',
    'inlay hints: ' + JSON.stringify(hints.map((h) => h.label)));

  const items = await conn.sendRequest(rpc.CallHierarchyPrepareRequest.type, { textDocument: doc, position: { line: 24, character: 0 } });
  const incoming = await conn.sendRequest(rpc.CallHierarchyIncomingCallsRequest.type, { item: items[0] });
  const outgoing = await conn.sendRequest(rpc.CallHierarchyOutgoingCallsRequest.type, { item: items[0] });
  check(items[0].name === 'sum_prefix' && incoming[0].from.name === 'main' && outgoing[0].to.name === 'add_next',
    'call hierarchy: main → sum_prefix → add_next');

  const symbols = await conn.sendRequest(rpc.WorkspaceSymbolRequest.type, { query: '' });
  check(symbols.length === 5 && symbols.some((s) => s.name === '#3 sum_prefix — null_inline.cpp:25'),
    'workspace symbols: ' + symbols.map((s) => s.name).join(', '));

  const threads = await conn.sendRequest('faultline/threads');
  check(threads.threads.length === 1 && threads.threads[0].frames.length === 5 && threads.threads[0].frames[0].culprit,
    'faultline/threads lists the thread and its frames');

  // A GPU core dump: an Error at every level of the faulting instruction's
  // inline chain, and a lens per level.
  const cuda = path.join(dir, '..', 'cuda');
  // The core names its build paths; the workspace folder holding the
  // kernel sources resolves them wherever the repository is checked out.
  await conn.sendNotification(rpc.DidChangeWorkspaceFoldersNotification.type, {
    event: { added: [{ uri: pathToFileURL(cuda).href, name: 'cuda' }], removed: [] },
  });
  const gsum = await conn.sendRequest(rpc.ExecuteCommandRequest.type, {
    command: 'faultline.open', arguments: [{ dump: path.join(cuda, 'cores/illegal_address.sm_80.nvcudmp.gz') }],
  });
  check(gsum.format === 'cuda-core' && gsum.kernel === 'crash_kernel' && gsum.line === 8,
    'faultline.open of a GPU core names the kernel and the innermost level: ' + JSON.stringify(gsum));
  const kernels = pathToFileURL(path.join(cuda, 'src', 'kernels.cu')).href;
  while ((diagnostics.get(kernels) || []).length < 2) {
    await new Promise((resolve) => waiters.push(resolve));
  }
  const kdiags = diagnostics.get(kernels);
  check(kdiags.every((d) => d.severity === rpc.DiagnosticSeverity.Error && d.relatedInformation.length === 5) &&
    kdiags.some((d) => d.message.endsWith('inline level 5 of 5 in crash_kernel')),
  'GPU inline levels in kernels.cu: ' + kdiags.map((d) => d.message).join(' | '));
  const klenses = await conn.sendRequest(rpc.CodeLensRequest.type, { textDocument: { uri: kernels } });
  check(klenses.map((l) => l.command.title).sort().join(' | ') ===
    'inline level 4 of 5 in crash_kernel | inline level 5 of 5 in crash_kernel', 'GPU lenses in kernels.cu');

  await conn.sendRequest(rpc.ShutdownRequest.type);
  await conn.sendNotification(rpc.ExitNotification.type);
  const code = await exited;
  if (code !== 0) console.error(stderr);
  check(code === 0, 'exit code after shutdown and exit: ' + code);
  conn.dispose();
  clearTimeout(overall);
}

main().catch((e) => fail(e.stack || String(e)));
