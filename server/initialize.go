package server

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"
)

// Command names (workspace/executeCommand), advertised in
// executeCommandProvider.
const (
	CommandOpen         = "faultline.open"
	CommandClose        = "faultline.close"
	CommandSelectThread = "faultline.selectThread"
	CommandReport       = "faultline.report"
	CommandGotoFrame    = "faultline.gotoFrame"
	CommandFetchSources = "faultline.fetchSources"
	CommandShowCommit   = "faultline.showCommit"
)

// MethodThreads is the custom request returning threads and frames.
const MethodThreads = "faultline/threads"

// Initialize answers initialize (LSP 3.17 §"Initialize Request"): it
// records the client's capabilities, workspace folders and
// initializationOptions, and advertises what the server provides.
func (s *Server) Initialize(_ context.Context, params *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	settings, err := parseSettings(params.InitializationOptions)
	if err != nil {
		s.log.Warn("ignoring initializationOptions", zap.Error(err))
	}
	var folders []string
	if fs, ok := params.WorkspaceFolders.Get(); ok {
		for _, f := range fs {
			if f.URI.IsFile() {
				folders = append(folders, abs(f.URI.FsPath()))
			}
		}
	}
	if len(folders) == 0 {
		folders = legacyRootFolder(params)
	}

	var caps clientCaps
	c := params.Capabilities
	if w := c.Window; w != nil {
		caps.workDoneProgress = w.WorkDoneProgress != nil && *w.WorkDoneProgress
		caps.showDocument = w.ShowDocument != nil && w.ShowDocument.Support
	}
	caps.frameDocuments = experimentalFlag(c.Experimental, "faultlineFrameDocuments")
	if w := c.Workspace; w != nil {
		caps.codeLensRefresh = w.CodeLens != nil && w.CodeLens.RefreshSupport != nil && *w.CodeLens.RefreshSupport
		caps.inlayHintRefresh = w.InlayHint != nil && w.InlayHint.RefreshSupport != nil && *w.InlayHint.RefreshSupport
	}

	s.mu.Lock()
	s.ph = phaseRunning
	s.caps = caps
	s.settings = settings
	s.folders = folders
	s.res = newResolver(s.res, folders, settings)
	s.mu.Unlock()
	s.log.Info("initialize", zap.Strings("folders", folders), zap.Int("dumps", len(settings.Dumps)))

	yes := true
	full := protocol.TextDocumentSyncKindNone
	return &protocol.InitializeResult{
		ServerInfo: protocol.ServerInfo{Name: Name, Version: protocol.NewOptional(s.version())},
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync:        &protocol.TextDocumentSyncOptions{OpenClose: &yes, Change: &full},
			HoverProvider:           protocol.Boolean(true),
			CodeLensProvider:        &protocol.CodeLensOptions{},
			InlayHintProvider:       protocol.Boolean(true),
			CallHierarchyProvider:   protocol.Boolean(true),
			WorkspaceSymbolProvider: protocol.Boolean(true),
			DocumentSymbolProvider:  protocol.Boolean(true),
			// Frames without local source open as faultline-frame: documents
			// whose text faultline/frameDocument returns.
			Experimental: protocol.LSPAny(`{"frameDocumentScheme":"` + FrameScheme + `"}`),
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: []string{
				CommandOpen, CommandClose, CommandSelectThread, CommandReport, CommandGotoFrame,
				CommandFetchSources, CommandShowCommit, CommandJobReport,
			}},
			Workspace: &protocol.WorkspaceOptions{
				WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
					Supported: &yes, ChangeNotifications: protocol.Boolean(true),
				},
			},
		},
	}, nil
}

// legacyRootFolder is the workspace of a client that predates
// workspaceFolders: its rootUri, or else its rootPath (both deprecated since
// LSP 3.6 in favour of workspaceFolders, but all that such a client sends).
func legacyRootFolder(params *protocol.InitializeParams) []string {
	//lint:ignore SA1019 clients that predate workspaceFolders send only rootUri or rootPath
	if u := params.RootURI; u != nil && u.IsFile() {
		return []string{abs(u.FsPath())}
	}
	//lint:ignore SA1019 as above
	if root, ok := params.RootPath.Get(); ok && root != "" {
		return []string{abs(root)}
	}
	return nil
}

// experimentalFlag reads a boolean of the client's experimental
// capabilities; anything else reads as false.
func experimentalFlag(exp protocol.LSPAny, name string) bool {
	var m map[string]any
	if len(exp) == 0 || json.Unmarshal(exp, &m) != nil {
		return false
	}
	b, _ := m[name].(bool)
	return b
}

func (s *Server) version() string {
	if s.opts.Version != "" {
		return s.opts.Version
	}
	return "devel"
}

// Initialized opens the dumps named in initializationOptions, in order, off
// the read loop (loading calls back into the client for progress).
func (s *Server) Initialized(context.Context, *protocol.InitializedParams) error {
	s.mu.Lock()
	dumps := append([]OpenArgs(nil), s.settings.Dumps...)
	s.mu.Unlock()
	if len(dumps) == 0 {
		return nil
	}
	go func() {
		for _, d := range dumps {
			if _, err := s.openDump(s.ctx, d, nil); err != nil {
				s.log.Warn("opening a dump from initializationOptions failed", zap.String("dump", d.Dump), zap.Error(err))
			}
		}
	}()
	return nil
}

// Shutdown answers shutdown; every later request fails (LSP 3.17
// §"Shutdown Request").
func (s *Server) Shutdown(context.Context) error {
	s.mu.Lock()
	s.ph = phaseShutDown
	s.sawShutdown = true
	s.mu.Unlock()
	return nil
}

// Exit ends Serve (LSP 3.17 §"Exit Notification"); the process exits with 0
// after shutdown, 1 otherwise.
func (s *Server) Exit(context.Context) error {
	s.exitOnce.Do(func() { close(s.exited) })
	return nil
}

// DidChangeConfiguration applies new settings: source mapping changes
// rebuild the view; debug directory changes reload the dump, and so does
// turning "offline" off (debuginfod may have what offline left out;
// turning it on only stops later fetches).
func (s *Server) DidChangeConfiguration(_ context.Context, params *protocol.DidChangeConfigurationParams) error {
	st, err := parseSettings(params.Settings)
	if err != nil {
		s.showMessage(protocol.MessageTypeWarning, "faultline: "+err.Error())
		return nil
	}
	s.mu.Lock()
	old := s.settings
	st.Dumps = old.Dumps
	s.settings = st
	s.res = newResolver(s.res, s.folders, st)
	cur := s.cur
	s.mu.Unlock()
	if cur == nil {
		return nil
	}
	if !equalStrings(old.DebugDirs, st.DebugDirs) || (old.Offline && !st.Offline) {
		args := cur.args
		go func() {
			if _, err := s.openDump(s.ctx, args, nil); err != nil {
				s.log.Warn("reloading after a configuration change failed", zap.Error(err))
			}
		}()
		return nil
	}
	return s.rebuild(0)
}

// DidChangeWorkspaceFolders updates the folders sources resolve against.
func (s *Server) DidChangeWorkspaceFolders(_ context.Context, params *protocol.DidChangeWorkspaceFoldersParams) error {
	s.mu.Lock()
	removed := map[string]bool{}
	for _, f := range params.Event.Removed {
		removed[abs(f.URI.FsPath())] = true
	}
	var folders []string
	for _, f := range s.folders {
		if !removed[f] {
			folders = append(folders, f)
		}
	}
	for _, f := range params.Event.Added {
		if f.URI.IsFile() {
			folders = append(folders, abs(f.URI.FsPath()))
		}
	}
	s.folders = folders
	s.res = newResolver(s.res, folders, s.settings)
	cur := s.cur
	s.mu.Unlock()
	if cur != nil {
		return s.rebuild(0)
	}
	return nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
