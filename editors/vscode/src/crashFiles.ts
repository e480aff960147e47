// Crash files by the names they usually have (core, core.PID,
// core.NAME.PID, systemd-coredump's core.NAME.UID.BOOTID.PID.TIME[.zst|.xz|
// .lz4], *.core, *.nvcudmp, apport's *.crash), claimed only after their
// first bytes say so: an ELF core, compressed data under a crash file's
// name, an apport report. core.py is not a core. The Explorer entry shows
// on the files sniffed here (the context key faultline.crashFiles), and a
// crash file that opened as a text or binary tab (a name the crash
// editor's patterns cannot tell from source, such as core.ledger) is
// reopened in the crash editor.

import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

/** crashName matches the names a crash file usually has (before sniffing). */
export const crashName =
  /^(core|core\..+|.+\.core(\.(gz|zst|xz|lz4))?|.+\.nvcudmp(\.gz)?|.+\.crash)$/;

/** The glob of crashName for workspace.findFiles and file watchers. */
const crashGlob = '**/{core,core.*,*.core,*.core.gz,*.core.zst,*.core.xz,*.core.lz4,*.nvcudmp,*.nvcudmp.gz,*.crash}';

/** The magic numbers of the compressions faultline undoes. */
const compressed = [
  Buffer.from([0x1f, 0x8b]), // gzip
  Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), // zstd
  Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), // xz
  Buffer.from([0x04, 0x22, 0x4d, 0x18]), // lz4 frame
];

/**
 * isCrashFile reads the first bytes of file: an ELF core (e_type ET_CORE)
 * or an NVIDIA GPU core (ELF, .nvcudmp), compressed data under a crash
 * file's name, or an apport report ("ProblemType: ").
 */
export async function isCrashFile(file: string): Promise<boolean> {
  const name = path.basename(file);
  if (!crashName.test(name)) {
    return false;
  }
  let head: Buffer;
  try {
    const fd = await fs.promises.open(file, 'r');
    try {
      head = Buffer.alloc(32);
      const { bytesRead } = await fd.read(head, 0, 32, 0);
      head = head.subarray(0, bytesRead);
    } finally {
      await fd.close();
    }
  } catch {
    return false; // a directory, a file gone or unreadable
  }
  if (head.subarray(0, 4).equals(Buffer.from('\x7fELF', 'latin1'))) {
    // e_type (offset 16, the ELF class's byte order; 4 = ET_CORE).
    const eType = head[5] === 2 ? head.readUInt16BE(16) : head.readUInt16LE(16);
    return eType === 4 || name.endsWith('.nvcudmp');
  }
  if (head.toString('latin1').startsWith('ProblemType: ')) {
    return true;
  }
  return compressed.some((m) => head.subarray(0, m.length).equals(m));
}

/**
 * CrashFiles keeps the context key faultline.crashFiles (the paths of the
 * workspace's sniffed crash files) and reopens crash files that opened as
 * text in the crash editor.
 */
export class CrashFiles implements vscode.Disposable {
  private readonly files = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly viewType: string) {
    const watcher = vscode.workspace.createFileSystemWatcher(crashGlob);
    watcher.onDidCreate((u) => void this.check(u.fsPath));
    watcher.onDidChange((u) => void this.check(u.fsPath));
    watcher.onDidDelete((u) => this.forget(u.fsPath));
    this.disposables.push(watcher, vscode.window.tabGroups.onDidChangeTabs((e) => void this.reopen(e.opened)));
  }

  /** scan sniffs the workspace's files with crash files' names. */
  async scan(): Promise<void> {
    const found = await vscode.workspace.findFiles(crashGlob, '{**/node_modules/**,**/.git/**}', 2000);
    await Promise.all(found.map((u) => this.check(u.fsPath, false)));
    await this.publish();
  }

  private async check(file: string, publish = true): Promise<void> {
    const was = this.files.has(file);
    if (await isCrashFile(file)) {
      this.files.add(file);
    } else {
      this.files.delete(file);
    }
    if (publish && was !== this.files.has(file)) {
      await this.publish();
    }
  }

  private forget(file: string): void {
    if (this.files.delete(file)) {
      void this.publish();
    }
  }

  private async publish(): Promise<void> {
    await vscode.commands.executeCommand('setContext', 'faultline.crashFiles', [...this.files]);
  }

  /** reopen shows in the crash editor the crash files just opened as text (or binary) tabs. */
  private async reopen(tabs: readonly vscode.Tab[]): Promise<void> {
    for (const tab of tabs) {
      const input = tab.input;
      if (!(input instanceof vscode.TabInputText) || input.uri.scheme !== 'file' || !(await isCrashFile(input.uri.fsPath))) {
        continue;
      }
      this.files.add(input.uri.fsPath);
      await vscode.commands.executeCommand('vscode.openWith', input.uri, this.viewType, tab.group.viewColumn);
      await vscode.window.tabGroups.close(tab).then(undefined, () => undefined);
    }
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}
