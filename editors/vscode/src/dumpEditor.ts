// The custom editor for crash files (core, core.N, core.NAME.N and
// systemd-coredump's names, *.core[.gz|.zst|.xz|.lz4], *.nvcudmp, apport's
// *.crash): double-clicking one in the Explorer analyzes it instead of
// showing an empty binary tab. A file of such a name whose first bytes are
// not a crash's opens in the text editor instead. The editor itself shows
// what was found; the crash is shown on the source lines, in the Crash
// view and the status bar.

import * as vscode from 'vscode';
import { isCrashFile } from './crashFiles';
import { OpenSummary } from './protocol';

export const dumpEditorViewType = 'faultline.dump';

/** Opens a dump (the extension's open) and returns its summary. */
export type OpenDump = (dump: string) => Promise<OpenSummary | undefined>;

export class DumpEditorProvider implements vscode.CustomReadonlyEditorProvider {
  constructor(private readonly openDump: OpenDump) {}

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
  }

  async resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): Promise<void> {
    panel.webview.options = { enableScripts: false };
    if (!(await isCrashFile(document.uri.fsPath))) {
      // Not a crash after all: the file's own editor, in this tab's place.
      await vscode.commands.executeCommand('vscode.openWith', document.uri, 'default', panel.viewColumn);
      panel.dispose();
      return;
    }
    const name = document.uri.path.split('/').pop() ?? document.uri.fsPath;
    panel.webview.html = page(name, `<p>Analyzing ${escapeHTML(document.uri.fsPath)}…</p>`);
    const sum = await this.openDump(document.uri.fsPath);
    if (!sum) {
      panel.webview.html = page(name, '<p>faultline could not open this file (see the Faultline output).</p>');
      return;
    }
    const rows: [string, string][] = [
      ['Dump', sum.dump],
      ['Format', sum.format],
      ['Signal', sum.signal ?? '—'],
      ['Summary', sum.summary],
      ['Thread', `${sum.thread} of ${sum.threads}`],
      ['Culprit', sum.function ? `#${sum.frame} ${sum.function}` : '—'],
      ['Source', sum.file ? `${sum.file}:${sum.line ?? '?'}` : '—'],
      ['Problems', String(sum.problems)],
    ];
    const table = rows.map(([k, v]) => `<tr><th>${k}</th><td>${escapeHTML(v)}</td></tr>`).join('');
    panel.webview.html = page(
      name,
      `<table>${table}</table><p>The crash is shown on its source lines, in the Crash view and in the status bar.</p>`,
    );
  }
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">
<style>body{font-family:var(--vscode-font-family);color:var(--vscode-foreground)}th{text-align:left;padding-right:1em}</style>
<title>${escapeHTML(title)}</title></head><body><h2>Faultline: ${escapeHTML(title)}</h2>${body}</body></html>`;
}

function escapeHTML(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
