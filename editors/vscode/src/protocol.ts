// Shapes of what `faultline serve` answers (see server/load.go OpenSummary
// and server/threads.go ThreadsResult in the faultline repository).

/** Result of workspace/executeCommand "faultline.open" and "faultline.selectThread". */
export interface OpenSummary {
  dump: string;
  format: string;
  signal?: string;
  summary: string;
  thread: number;
  threads: number;
  frame: number;
  function?: string;
  file?: string;
  line?: number;
  /** The culprit's local file, when it resolves to one. */
  uri?: string;
  problems: number;
  unresolved?: string[];
}

/** Result of the custom request "faultline/threads". */
export interface ThreadsResult {
  dump: string;
  crashingThread: number;
  selectedThread: number;
  summary: string;
  threads: ThreadInfo[];
}

export interface ThreadInfo {
  id: number;
  name?: string;
  crashed: boolean;
  selected: boolean;
  frames: FrameInfo[];
}

export interface FrameInfo {
  index: number;
  function?: string;
  file?: string;
  /** 1-based, as in the crash model. */
  line?: number;
  column?: number;
  pc: string;
  module?: string;
  inlined: boolean;
  culprit?: boolean;
  /** Set when the frame's file resolves to a local one. */
  uri?: string;
}

/** Server commands (workspace/executeCommand) and requests. */
export const Commands = {
  open: 'faultline.open',
  close: 'faultline.close',
  selectThread: 'faultline.selectThread',
  report: 'faultline.report',
  gotoFrame: 'faultline.gotoFrame',
  fetchSources: 'faultline.fetchSources',
} as const;

export const MethodThreads = 'faultline/threads';

/** The basename of a path, for labels. */
export function baseName(p: string): string {
  const i = p.lastIndexOf('/');
  return i >= 0 ? p.slice(i + 1) : p;
}
