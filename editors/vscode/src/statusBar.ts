// The status-bar item: the signal and the culprit frame of the open crash;
// clicking it jumps to the culprit line.

import * as vscode from 'vscode';
import { ThreadsResult, baseName } from './protocol';

/** signalOf is the first word of the server's crash summary ("SIGSEGV: NULL pointer read …"). */
export function signalOf(summary: string): string {
  const m = /^[A-Za-z0-9_]+/.exec(summary);
  return m ? m[0] : 'crash';
}

export class CrashStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('faultline.status', vscode.StatusBarAlignment.Left, 100);

  constructor() {
    this.item.name = 'Faultline';
  }

  update(res: ThreadsResult | undefined): void {
    if (!res || res.threads.length === 0) {
      this.item.hide();
      return;
    }
    const thread = res.threads.find((t) => t.selected) ?? res.threads.find((t) => t.crashed) ?? res.threads[0];
    const culprit = thread.frames.find((f) => f.culprit) ?? thread.frames[0];
    let where = '';
    if (culprit) {
      where = culprit.file && culprit.line ? `${baseName(culprit.file)}:${culprit.line}` : culprit.function || culprit.pc;
    }
    this.item.text = `$(zap) ${signalOf(res.summary)}${where ? ' · ' + where : ''}`;
    this.item.tooltip = `${res.summary}\n${res.dump}\nClick to show the culprit line.`;
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
    if (culprit?.uri && culprit.line) {
      const line = culprit.line - 1;
      this.item.command = {
        title: 'Show Culprit',
        command: 'vscode.open',
        arguments: [vscode.Uri.parse(culprit.uri), { selection: new vscode.Range(line, 0, line, 0) }],
      };
    } else {
      this.item.command = 'faultline.ui.showReport';
    }
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
