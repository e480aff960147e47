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
  /** A page of the thread's frames, from startFrame (faultline/threads pages them). */
  frames: FrameInfo[];
  startFrame: number;
  totalFrames: number;
  /** Equal for threads stopped in the same functions at the same lines. */
  stack: string;
}

/** Params of "faultline/threads": a page of frames per thread (64 by default, at most 1000). */
export interface ThreadsParams {
  thread?: number;
  startFrame?: number;
  levels?: number;
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
  /** The read-only faultline-frame: document of a frame without local source. */
  docUri?: string;
}

/** Result of "faultline/frameDocument". */
export interface FrameDocument {
  uri: string;
  name: string;
  text: string;
  /** 1-based line of the frame's pc (0: not listed). */
  line: number;
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
export const MethodFrameDocument = 'faultline/frameDocument';
/** The URI scheme of frame documents. */
export const FrameScheme = 'faultline-frame';
/** Frames asked for when the Crash view loads more of a deep stack. */
export const MoreFrames = 500;

/** The basename of a path, for labels. */
export function baseName(p: string): string {
  const i = p.lastIndexOf('/');
  return i >= 0 ? p.slice(i + 1) : p;
}
