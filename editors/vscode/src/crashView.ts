// The Crash view: threads with identical stacks grouped under one node
// (with a count), each group expanding into its frames; clicking a frame
// opens its source line, or the read-only disassembly document of a frame
// without local source. Frames come in pages (faultline/threads); a deep
// stack ends in a "more frames" node that loads the next page.

import * as vscode from 'vscode';
import { FrameInfo, ThreadInfo, ThreadsResult, baseName } from './protocol';

/** Threads whose frames are the same functions at the same lines. */
export interface ThreadGroup {
  kind: 'group';
  threads: ThreadInfo[];
}

export interface FrameNode {
  kind: 'frame';
  thread: ThreadInfo;
  frame: FrameInfo;
}

/** The node after the loaded frames of a deep stack. */
export interface MoreNode {
  kind: 'more';
  thread: ThreadInfo;
}

export type CrashNode = ThreadGroup | FrameNode | MoreNode;

/**
 * stackKey names a thread's stack for grouping: the server's hash of every
 * frame (the frames sent are only a page), else the frames themselves.
 */
function stackKey(t: ThreadInfo): string {
  return t.stack || t.frames.map((f) => `${f.function ?? f.pc}@${f.file ?? ''}:${f.line ?? 0}`).join('\n');
}

/**
 * groupThreads groups threads with identical stacks, in first-seen order,
 * except that the crashing (or selected) thread's group comes first.
 */
export function groupThreads(res: ThreadsResult): ThreadGroup[] {
  const byKey = new Map<string, ThreadGroup>();
  for (const t of res.threads) {
    const k = stackKey(t);
    let g = byKey.get(k);
    if (!g) {
      g = { kind: 'group', threads: [] };
      byKey.set(k, g);
    }
    g.threads.push(t);
  }
  const groups = [...byKey.values()];
  const rank = (g: ThreadGroup) => (g.threads.some((t) => t.crashed) ? 0 : g.threads.some((t) => t.selected) ? 1 : 2);
  return groups.sort((a, b) => rank(a) - rank(b));
}

/** frameLabel is "#3 Client::~Client". */
export function frameLabel(f: FrameInfo): string {
  return `#${f.index} ${f.function || f.pc}`;
}

/** frameLocation is "null_inline.cpp:16", or the module when there is no line. */
export function frameLocation(f: FrameInfo): string {
  if (f.file && f.line) {
    return `${baseName(f.file)}:${f.line}`;
  }
  return f.module ? baseName(f.module) : '';
}

/** loadedEnd is the index after the last loaded frame of t. */
function loadedEnd(t: ThreadInfo): number {
  return (t.startFrame ?? 0) + t.frames.length;
}

export class CrashViewProvider implements vscode.TreeDataProvider<CrashNode> {
  private readonly changed = new vscode.EventEmitter<CrashNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private groups: ThreadGroup[] = [];

  /** The threads last shown. */
  result: ThreadsResult | undefined;

  update(res: ThreadsResult | undefined): void {
    this.result = res && res.threads.length > 0 ? res : undefined;
    this.groups = this.result ? groupThreads(this.result) : [];
    this.changed.fire(undefined);
  }

  getChildren(node?: CrashNode): CrashNode[] {
    if (!node) {
      return this.groups;
    }
    if (node.kind === 'group') {
      const t = node.threads.find((x) => x.selected) ?? node.threads[0];
      const out: CrashNode[] = t.frames.map((frame) => ({ kind: 'frame', thread: t, frame }));
      if (loadedEnd(t) < (t.totalFrames ?? 0)) {
        out.push({ kind: 'more', thread: t });
      }
      return out;
    }
    return [];
  }

  /** appendFrames adds a page of thread's frames (from faultline/threads) after the loaded ones. */
  appendFrames(page: ThreadInfo): void {
    const t = this.result?.threads.find((x) => x.id === page.id);
    if (!t || page.startFrame !== loadedEnd(t)) {
      return;
    }
    t.frames.push(...page.frames);
    this.changed.fire(undefined);
  }

  getTreeItem(node: CrashNode): vscode.TreeItem {
    if (node.kind === 'group') {
      return this.groupItem(node);
    }
    if (node.kind === 'more') {
      const t = node.thread;
      const item = new vscode.TreeItem(`… ${t.totalFrames - loadedEnd(t)} more frames`, vscode.TreeItemCollapsibleState.None);
      item.description = `of ${t.totalFrames}`;
      item.command = { title: 'Load More Frames', command: 'faultline.ui.moreFrames', arguments: [t.id] };
      item.contextValue = 'faultline.moreFrames';
      return item;
    }
    const f = node.frame;
    const item = new vscode.TreeItem(frameLabel(f), vscode.TreeItemCollapsibleState.None);
    item.description = frameLocation(f) + (f.inlined ? ' (inlined)' : '');
    item.tooltip = new vscode.MarkdownString(
      [
        `**#${f.index}** \`${f.function || '??'}\``,
        f.inlined ? 'inlined into the frame below it' : '',
        f.file ? `${f.file}:${f.line ?? '?'}` : '',
        `pc \`${f.pc}\``,
        f.module ? `in \`${f.module}\`` : '',
      ]
        .filter((s) => s)
        .join('  \n'),
    );
    // An inlined level has its own icon (a level inside the frame below
    // it), not the ⚡ of the crash.
    item.iconPath = f.culprit
      ? new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'))
      : new vscode.ThemeIcon(f.inlined ? 'type-hierarchy-sub' : 'symbol-method');
    item.contextValue = 'faultline.frame';
    if (f.uri && f.line) {
      const line = Math.max(0, f.line - 1);
      item.command = {
        title: 'Open Frame',
        command: 'vscode.open',
        arguments: [vscode.Uri.parse(f.uri), { selection: new vscode.Range(line, 0, line, 0) } as vscode.TextDocumentShowOptions],
      };
    } else if (f.docUri) {
      item.command = { title: 'Open Frame Disassembly', command: 'faultline.ui.openFrameDocument', arguments: [f.docUri] };
    }
    return item;
  }

  private groupItem(g: ThreadGroup): vscode.TreeItem {
    const first = g.threads[0];
    const crashed = g.threads.some((t) => t.crashed);
    // Name the group by the frame a reader cares about: the culprit, else
    // the first frame with source (not the futex wait every parked worker
    // shows on top), else the top frame.
    const top = first.frames.find((f) => f.culprit) ?? first.frames.find((f) => f.file && f.line) ?? first.frames[0];
    let label: string;
    if (g.threads.length === 1) {
      label = `Thread ${first.id}${first.name ? ` (${first.name})` : ''}`;
    } else {
      const ids = g.threads.slice(0, 4).map((t) => t.id).join(', ');
      label = `${g.threads.length} threads: ${ids}${g.threads.length > 4 ? ', …' : ''}`;
    }
    const expand = crashed || g.threads.some((t) => t.selected);
    const item = new vscode.TreeItem(
      label,
      expand ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
    );
    const parts = [];
    if (g.threads.length > 1) {
      parts.push(`×${g.threads.length}`);
    }
    if (crashed) {
      parts.push('crashed');
    }
    if (top) {
      parts.push(top.function || top.pc);
    }
    item.description = parts.join(' · ');
    item.iconPath = new vscode.ThemeIcon(crashed ? 'zap' : g.threads.some((t) => t.selected) ? 'pass-filled' : 'debug-stackframe');
    item.contextValue = 'faultline.threadGroup';
    item.tooltip = `${g.threads.length} thread(s) with this stack: ${g.threads.map((t) => t.id).join(', ')}`;
    return item;
  }
}
