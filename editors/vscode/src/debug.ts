// The post-mortem debugger: debug type "faultline" runs `faultline dap`
// (the same binary as the language server) on a launch configuration
// {"coreFile", "program"?, "sysroot"?, "sourceMap"?, "offline"?}; the Call Stack,
// Variables, Watch and Disassembly views then show the dump.

import * as fs from 'fs';
import * as vscode from 'vscode';

/** DebugType is the launch configurations' "type". */
export const DebugType = 'faultline';

/** registerDebugger adds the adapter factory, the configuration provider and "Debug Crash Dump…". */
export function registerDebugger(context: vscode.ExtensionContext, serverPath: () => string): void {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory(DebugType, {
      createDebugAdapterDescriptor: () => new vscode.DebugAdapterExecutable(serverPath(), ['dap']),
    }),
    vscode.debug.registerDebugConfigurationProvider(DebugType, new ConfigurationProvider()),
    vscode.commands.registerCommand('faultline.ui.debugCrashDump', debugCrashDump),
    vscode.debug.registerDebugAdapterTrackerFactory(DebugType, {
      createDebugAdapterTracker: () => ({ onDidSendMessage: offerDisassembly }),
    }),
  );
}

/** A stack frame as the adapter sends it (the fields read here). */
interface Frame {
  line: number;
  column: number;
  source?: {
    name?: string;
    path?: string;
    sourceReference?: number;
    presentationHint?: string;
    origin?: string;
    sources?: { name?: string; sourceReference?: number; adapterData?: { line?: number } }[];
  };
}

/**
 * offerDisassembly rewrites, in a stackTrace response on its way to the
 * Call Stack, each frame whose file is not on this machine (the adapter
 * keeps DWARF's name, path and line, de-emphasized) to open its
 * disassembly document instead, the related source the adapter gives, at
 * the pc: clicking it shows the disassembly, not an editor that cannot
 * open the file. Its source name keeps the file and line.
 */
function offerDisassembly(message: { type?: string; command?: string; body?: { stackFrames?: Frame[] } }): void {
  if (message.type !== 'response' || message.command !== 'stackTrace') {
    return;
  }
  for (const f of message.body?.stackFrames ?? []) {
    const src = f.source;
    const doc = src?.sources?.[0];
    if (!src || !doc?.sourceReference || src.sourceReference || (src.path && fs.existsSync(src.path))) {
      continue;
    }
    f.source = {
      name: `${src.name ?? '?'}:${f.line} (not on this machine: disassembly)`,
      sourceReference: doc.sourceReference,
      presentationHint: 'deemphasize',
      origin: src.origin,
    };
    f.line = doc.adapterData?.line ?? 1;
    f.column = 1;
  }
}

/** debugCrashDump asks for a core dump (unless given one) and starts a faultline debug session on it. */
async function debugCrashDump(coreFile?: string | vscode.Uri, program?: string): Promise<boolean> {
  if (coreFile instanceof vscode.Uri) {
    coreFile = coreFile.fsPath;
  }
  if (typeof coreFile !== 'string' || coreFile === '') {
    const picked = await vscode.window.showOpenDialog({
      title: 'Faultline: Debug Crash Dump (ELF core, .gz/.zst, or NVIDIA .nvcudmp)',
      canSelectFiles: true,
      canSelectMany: false,
      defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
    });
    coreFile = picked?.[0]?.fsPath;
    if (!coreFile) {
      return false;
    }
    if (program === undefined) {
      const exe = await vscode.window.showOpenDialog({
        title: 'Faultline: Executable of the crashed program (optional: Cancel to find it from the dump)',
        canSelectFiles: true,
        canSelectMany: false,
        defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
      });
      program = exe?.[0]?.fsPath;
    }
  }
  const config: vscode.DebugConfiguration = {
    type: DebugType,
    request: 'launch',
    name: `Crash: ${coreFile.split('/').pop()}`,
    coreFile,
  };
  if (program) {
    config.program = program;
  }
  return vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0], config);
}

/** ConfigurationProvider fills what a launch configuration leaves out. */
class ConfigurationProvider implements vscode.DebugConfigurationProvider {
  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    return [{ type: DebugType, request: 'launch', name: 'Debug core dump', coreFile: '${workspaceFolder}/core' }];
  }

  async resolveDebugConfiguration(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): Promise<vscode.DebugConfiguration | undefined> {
    if (!config.type && !config.request && !config.name) {
      // F5 without a launch.json: ask for the dump and start a session on
      // it; this empty configuration itself is dropped.
      await debugCrashDump();
      return undefined;
    }
    if (!config.coreFile && !config.coreDumpPath) {
      await vscode.window.showErrorMessage('Faultline: the launch configuration needs "coreFile" (the core dump to open).');
      return undefined;
    }
    const settings = vscode.workspace.getConfiguration('faultline');
    config.sourceMap = { ...settings.get<Record<string, string>>('sourceMap', {}), ...(config.sourceMap ?? {}) };
    config.debugDirs = config.debugDirs ?? settings.get<string[]>('debugDirs', []);
    // faultline.offline: no debuginfod for the session either.
    config.offline = config.offline ?? settings.get<boolean>('offline', false);
    config.workspaceFolders = config.workspaceFolders ?? (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    config.cwd = config.cwd ?? folder?.uri.fsPath;
    return config;
  }
}
