// The faultline extension: starts `faultline serve` with
// vscode-languageclient and adds commands to open core dumps and crash logs,
// a Crash view of threads and frames, and a status-bar item.

import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { CrashViewProvider, ThreadGroup } from './crashView';
import { Commands, MethodThreads, MoreFrames, OpenSummary, ThreadsParams, ThreadsResult } from './protocol';
import { FrameDocumentProvider, FrameScheme, frameDocumentsFeature } from './frameDocument';
import { CrashStatus } from './statusBar';
import { registerDebugger } from './debug';
import { DumpEditorProvider, dumpEditorViewType } from './dumpEditor';
import { CrashFiles } from './crashFiles';
import * as fs from 'fs';
import * as path from 'path';

/** The settings passed to the server (initializationOptions and didChangeConfiguration). */
interface ServerSettings {
  sourceMap: Record<string, string>;
  debugDirs: string[];
  cacheDir: string;
  offline: boolean;
}

/** OpenArgs is faultline.open's argument. */
interface OpenArgs {
  dump: string;
  exe?: string;
  sysroot?: string;
}

let client: LanguageClient | undefined;
let startedCommand: string | undefined;
let lastOpen: OpenArgs | undefined;
const view = new CrashViewProvider();
const frameDocs = new FrameDocumentProvider(() => (client && client.state === State.Running ? client : undefined));
let status: CrashStatus | undefined;
let refreshTimer: NodeJS.Timeout | undefined;
let output: vscode.OutputChannel;
/** The server shipped inside a platform-specific .vsix (bin/faultline). */
let bundledServer: string | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const bundled = path.join(context.extensionPath, 'bin', 'faultline');
  bundledServer = fs.existsSync(bundled) ? bundled : undefined;
  if (bundledServer) {
    try {
      // A .vsix is a zip: make sure the unpacked server is executable.
      fs.chmodSync(bundledServer, 0o755);
    } catch {
      // read-only install: it was unpacked executable or the start says why
    }
  }
  output = vscode.window.createOutputChannel('Faultline');
  status = new CrashStatus();
  context.subscriptions.push(
    output,
    status,
    vscode.window.createTreeView('faultline.crash', { treeDataProvider: view, showCollapseAll: true }),
    vscode.commands.registerCommand('faultline.ui.openCoreDump', openCoreDump),
    vscode.commands.registerCommand('faultline.ui.openCrashLog', openCrashLog),
    vscode.commands.registerCommand('faultline.ui.selectThread', selectThread),
    vscode.commands.registerCommand('faultline.ui.selectThreadInView', (g?: ThreadGroup) => selectThread(g?.threads[0]?.id)),
    vscode.commands.registerCommand('faultline.ui.showReport', showReport),
    vscode.commands.registerCommand('faultline.ui.fetchSources', fetchSources),
    vscode.commands.registerCommand('faultline.ui.refreshCrashView', refresh),
    vscode.commands.registerCommand('faultline.ui.analyzeFile', analyzeFile),
    vscode.workspace.registerTextDocumentContentProvider(FrameScheme, frameDocs),
    vscode.commands.registerCommand('faultline.ui.openFrameDocument', (uri: string) => frameDocs.open(vscode.Uri.parse(uri))),
    vscode.commands.registerCommand('faultline.ui.moreFrames', moreFrames),
    vscode.window.registerCustomEditorProvider(
      dumpEditorViewType,
      // The crash editor keeps the focus; the culprit opens beside it.
      new DumpEditorProvider((dump) => open({ dump }, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true })),
      { supportsMultipleEditorsPerDocument: false },
    ),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('faultline.serverPath') && serverPath() !== startedCommand) {
        await restart();
      }
    }),
  );
  const crashFiles = new CrashFiles(dumpEditorViewType);
  context.subscriptions.push(crashFiles);
  void crashFiles.scan();
  registerDebugger(context, serverPath);
  await startClient();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}

function settings(): ServerSettings {
  const c = vscode.workspace.getConfiguration('faultline');
  return {
    sourceMap: c.get<Record<string, string>>('sourceMap') ?? {},
    debugDirs: c.get<string[]>('debugDirs') ?? [],
    cacheDir: c.get<string>('cacheDir') ?? '',
    offline: c.get<boolean>('offline') ?? false,
  };
}

/**
 * serverPath is the configured binary, else the one shipped in the .vsix,
 * else "faultline" from PATH.
 */
function serverPath(): string {
  return vscode.workspace.getConfiguration('faultline').get<string>('serverPath')?.trim() || bundledServer || 'faultline';
}

async function startClient(): Promise<void> {
  const command = serverPath();
  startedCommand = command;
  const serverOptions: ServerOptions = { command, args: ['serve'] };
  const clientOptions: LanguageClientOptions = {
    // Frames can be in any language: every local file can carry diagnostics and lenses.
    documentSelector: [{ scheme: 'file' }],
    initializationOptions: settings(),
    synchronize: { configurationSection: 'faultline' },
    outputChannel: output,
    middleware: {
      // Every load, thread selection or settings change republishes
      // diagnostics: refresh the Crash view and status bar then.
      handleDiagnostics(uri, diagnostics, next) {
        next(uri, diagnostics);
        scheduleRefresh();
      },
    },
  };
  client = new LanguageClient('faultline', 'Faultline', serverOptions, clientOptions);
  client.registerFeature(frameDocumentsFeature);
  try {
    await client.start();
  } catch (err) {
    const pick = await vscode.window.showErrorMessage(
      `Faultline: cannot start "${command} serve": ${errorText(err)}. Install faultline or set faultline.serverPath.`,
      'Open Settings',
    );
    if (pick) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'faultline.serverPath');
    }
    return;
  }
  output.appendLine(`faultline: started ${command} serve`);
}

async function restart(): Promise<void> {
  const old = client;
  client = undefined;
  if (old && old.state === State.Running) {
    await old.stop();
  }
  view.update(undefined);
  status?.update(undefined);
  await startClient();
  if (lastOpen) {
    await open(lastOpen);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** running returns the started client, or says why there is none. */
function running(): LanguageClient | undefined {
  if (client && client.state === State.Running) {
    return client;
  }
  void vscode.window.showErrorMessage(`Faultline: the language server is not running (faultline.serverPath: "${serverPath()}").`);
  return undefined;
}

async function execute<T>(command: string, arg?: object): Promise<T> {
  const c = running();
  if (!c) {
    throw new Error('the language server is not running');
  }
  return (await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: arg ? [arg] : [] })) as T;
}

/** serverHas tells whether the server advertises command. */
function serverHas(command: string): boolean {
  return client?.initializeResult?.capabilities.executeCommandProvider?.commands.includes(command) ?? false;
}

async function pickFile(title: string, filters?: Record<string, string[]>): Promise<string | undefined> {
  const picked = await vscode.window.showOpenDialog({
    title,
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
    filters,
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  return picked?.[0]?.fsPath;
}

/** openCoreDump asks for a dump, then optionally the executable, and opens them. */
async function openCoreDump(args?: OpenArgs): Promise<OpenSummary | undefined> {
  if (args && typeof args.dump === 'string') {
    return open(args);
  }
  const dump = await pickFile('Faultline: Open Core Dump (ELF core, .gz/.zst, or NVIDIA .nvcudmp)');
  if (!dump) {
    return undefined;
  }
  const exe = await pickFile('Faultline: Executable of the crashed program (optional: Cancel to find it from the dump)');
  return open({ dump, exe });
}

/** analyzeFile opens the crash file chosen in the Explorer (or an editor tab). */
async function analyzeFile(uri?: vscode.Uri): Promise<OpenSummary | undefined> {
  const target = uri ?? vscode.window.activeTextEditor?.document.uri;
  if (!target || target.scheme !== 'file') {
    return openCoreDump();
  }
  return open({ dump: target.fsPath });
}

async function openCrashLog(file?: string): Promise<OpenSummary | undefined> {
  const dump =
    typeof file === 'string'
      ? file
      : await pickFile('Faultline: Open Crash Log (gdb, faulthandler, compute-sanitizer, cuda-gdb, nvdisasm)', {
          'Crash logs': ['log', 'txt', 'out', 'err'],
          'All files': ['*'],
        });
  return dump ? open({ dump }) : undefined;
}

async function open(args: OpenArgs, show: vscode.TextDocumentShowOptions = {}): Promise<OpenSummary | undefined> {
  const a: OpenArgs = { dump: args.dump };
  if (args.exe) {
    a.exe = args.exe;
  }
  if (args.sysroot) {
    a.sysroot = args.sysroot;
  }
  let sum: OpenSummary;
  try {
    sum = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Faultline: opening ${a.dump}` },
      () => execute<OpenSummary>(Commands.open, a),
    );
  } catch (err) {
    // The server also shows the failure with window/showMessage.
    output.appendLine(`faultline.open ${JSON.stringify(a)} failed: ${errorText(err)}`);
    return undefined;
  }
  lastOpen = a;
  await refresh();
  if (sum.uri && sum.line) {
    const line = sum.line - 1;
    await vscode.window.showTextDocument(vscode.Uri.parse(sum.uri), {
      selection: new vscode.Range(line, 0, line, 0),
      preview: false,
      ...show,
    });
  } else {
    void vscode.window.showWarningMessage(
      `Faultline: ${sum.summary}. The culprit's source file ${sum.file ?? ''} was not found locally: open its checkout as a workspace folder, set faultline.sourceMap, or run Faultline: Fetch Sources.`,
    );
  }
  return sum;
}

function scheduleRefresh(): void {
  if (refreshTimer) {
    clearTimeout(refreshTimer);
  }
  refreshTimer = setTimeout(() => void refresh(), 150);
}

/** refresh asks the server for threads and frames and updates the view and status bar. */
async function refresh(): Promise<ThreadsResult | undefined> {
  if (!client || client.state !== State.Running) {
    return undefined;
  }
  try {
    const res = await client.sendRequest<ThreadsResult>(MethodThreads, {});
    view.update(res);
    status?.update(res);
    await vscode.commands.executeCommand('setContext', 'faultline.crashOpen', res.threads.length > 0);
    return res;
  } catch (err) {
    output.appendLine(`${MethodThreads} failed: ${errorText(err)}`);
    return undefined;
  }
}

/** moreFrames loads the next page of thread's frames into the Crash view. */
async function moreFrames(thread: number): Promise<void> {
  const t = view.result?.threads.find((x) => x.id === thread);
  if (!t || !client || client.state !== State.Running) {
    return;
  }
  const params: ThreadsParams = { thread, startFrame: (t.startFrame ?? 0) + t.frames.length, levels: MoreFrames };
  try {
    const res = await client.sendRequest<ThreadsResult>(MethodThreads, params);
    if (res.threads[0]) {
      view.appendFrames(res.threads[0]);
    }
  } catch (err) {
    output.appendLine(`${MethodThreads} ${JSON.stringify(params)} failed: ${errorText(err)}`);
  }
}

/** selectThread shows thread (picked from a list when not given) everywhere. */
async function selectThread(thread?: number): Promise<void> {
  if (typeof thread !== 'number') {
    const res = view.result ?? (await refresh());
    if (!res || res.threads.length === 0) {
      void vscode.window.showInformationMessage('Faultline: no crash is open.');
      return;
    }
    const items = res.threads.map((t) => {
      const top = t.frames.find((f) => f.culprit) ?? t.frames.find((f) => f.file && f.line) ?? t.frames[0];
      return {
        label: `${t.selected ? '$(pass-filled) ' : ''}Thread ${t.id}${t.name ? ` (${t.name})` : ''}`,
        description: [t.crashed ? 'crashed' : '', top ? top.function || top.pc : ''].filter((s) => s).join(' · '),
        detail: top?.file ? `${top.file}:${top.line ?? '?'}` : top?.module,
        id: t.id,
      };
    });
    const pick = await vscode.window.showQuickPick(items, { title: 'Faultline: Select Thread', matchOnDescription: true });
    if (!pick) {
      return;
    }
    thread = pick.id;
  }
  try {
    const sum = await execute<OpenSummary>(Commands.selectThread, { thread });
    const res = await refresh();
    const t = res?.threads.find((x) => x.id === thread);
    const f = t?.frames.find((x) => x.culprit && x.uri) ?? t?.frames.find((x) => x.uri && x.line);
    if (f?.uri && f.line) {
      await vscode.window.showTextDocument(vscode.Uri.parse(f.uri), { selection: new vscode.Range(f.line - 1, 0, f.line - 1, 0) });
    } else {
      void vscode.window.showInformationMessage(`Faultline: ${sum.summary} (no frame of thread ${thread} has local source).`);
    }
  } catch (err) {
    void vscode.window.showErrorMessage(`Faultline: ${errorText(err)}`);
  }
}

async function showReport(): Promise<void> {
  try {
    const res = await execute<{ path: string }>(Commands.report);
    // The server shows the report with window/showDocument; open it here too
    // in case the document request did not reach an editor.
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(res.path));
    await vscode.window.showTextDocument(doc, { preview: false });
  } catch (err) {
    void vscode.window.showErrorMessage(`Faultline: ${errorText(err)}`);
  }
}

/**
 * fetchSources checks out the exact sources of the crash's components. It
 * uses the server's faultline.fetchSources when advertised, and otherwise
 * runs `faultline sources` in a terminal (the checkouts land in cacheDir,
 * which the server searches for frame files).
 */
async function fetchSources(): Promise<void> {
  if (serverHas(Commands.fetchSources)) {
    try {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Faultline: fetching sources', cancellable: false },
        () => execute(Commands.fetchSources),
      );
      await refresh();
    } catch (err) {
      void vscode.window.showErrorMessage(`Faultline: ${errorText(err)}`);
    }
    return;
  }
  const dump = lastOpen?.dump ?? view.result?.dump;
  if (!dump) {
    void vscode.window.showInformationMessage('Faultline: open a core dump first.');
    return;
  }
  const st = settings();
  const args = ['sources'];
  if (lastOpen?.exe) {
    args.push('--exe', lastOpen.exe);
  }
  if (st.cacheDir) {
    args.push('--cache-dir', st.cacheDir);
  }
  if (st.offline) {
    args.push('--offline');
  }
  args.push(dump);
  const term = vscode.window.createTerminal({ name: 'Faultline: sources' });
  term.show();
  term.sendText([serverPath(), ...args].map(shellQuote).join(' '));
  void vscode.window.showInformationMessage(
    'Faultline: fetching sources with `faultline sources` in a terminal; run Faultline: Open Core Dump again when it is done to map frames onto the checkouts.',
  );
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
