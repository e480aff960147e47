// Read-only documents of frames without local source ("<signal handler
// called>", a libc frame whose sources are not on this machine, "??"): the
// server names them with faultline-frame: URIs (code lenses, the Crash
// view's docUri) and returns their text, the disassembly around the frame's
// pc with its symbol, from faultline/frameDocument. The extension tells the
// server it opens such URIs (experimental.faultlineFrameDocuments), so the
// server's window/showDocument for a lens lands here too.

import * as vscode from 'vscode';
import { ClientCapabilities, FeatureState, LanguageClient, StaticFeature } from 'vscode-languageclient/node';
import { FrameDocument, FrameScheme, MethodFrameDocument } from './protocol';

export class FrameDocumentProvider implements vscode.TextDocumentContentProvider {
  /** The 1-based pc line of each document served, by URI. */
  private readonly pcLines = new Map<string, number>();

  constructor(private readonly client: () => LanguageClient | undefined) {}

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const c = this.client();
    if (!c) {
      throw new Error('the Faultline language server is not running');
    }
    const doc = await c.sendRequest<FrameDocument>(MethodFrameDocument, { uri: uri.toString() }, token);
    this.pcLines.set(uri.toString(), doc.line);
    return doc.text;
  }

  /** pcLine is the line of the frame's pc in uri's document (0 when unknown). */
  pcLine(uri: vscode.Uri): number {
    return this.pcLines.get(uri.toString()) ?? 0;
  }

  /** open shows the document of uri at its pc, read-only. */
  async open(uri: vscode.Uri): Promise<vscode.TextEditor> {
    const doc = await vscode.workspace.openTextDocument(uri);
    const line = Math.max(0, this.pcLine(uri) - 1);
    return vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, line, 0), preview: false });
  }
}

/** frameDocumentsFeature adds experimental.faultlineFrameDocuments to the client capabilities. */
export const frameDocumentsFeature: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), faultlineFrameDocuments: true };
  },
  initialize(): void {},
  getState(): FeatureState {
    return { kind: 'static' };
  },
  clear(): void {},
};

export { FrameScheme };
