package dap

import (
	godap "github.com/google/go-dap"
)

// handle answers one request.
func (s *Server) handle(m godap.RequestMessage) {
	switch r := m.(type) {
	case *godap.InitializeRequest:
		s.onInitialize(r)
	case *godap.LaunchRequest:
		s.onLaunch(r)
	case *godap.AttachRequest:
		s.errorResponse(&r.Request, errUnsupported, "faultline debugs core dumps: use a launch configuration with \"coreFile\"")
	case *godap.ConfigurationDoneRequest:
		s.configured = true
		s.send(&godap.ConfigurationDoneResponse{Response: response(&r.Request)})
		s.maybeStop()
	case *godap.SetBreakpointsRequest:
		s.onSetBreakpoints(r)
	case *godap.SetFunctionBreakpointsRequest:
		resp := &godap.SetFunctionBreakpointsResponse{Response: response(&r.Request)}
		resp.Body.Breakpoints = unverified(len(r.Arguments.Breakpoints))
		s.send(resp)
	case *godap.SetExceptionBreakpointsRequest:
		s.send(&godap.SetExceptionBreakpointsResponse{Response: response(&r.Request)})
	case *godap.SetInstructionBreakpointsRequest:
		resp := &godap.SetInstructionBreakpointsResponse{Response: response(&r.Request)}
		resp.Body.Breakpoints = unverified(len(r.Arguments.Breakpoints))
		s.send(resp)
	case *godap.SetDataBreakpointsRequest:
		resp := &godap.SetDataBreakpointsResponse{Response: response(&r.Request)}
		resp.Body.Breakpoints = unverified(len(r.Arguments.Breakpoints))
		s.send(resp)
	case *godap.DisconnectRequest:
		s.send(&godap.DisconnectResponse{Response: response(&r.Request)})
		s.done = true
	case *godap.TerminateRequest:
		s.send(&godap.TerminateResponse{Response: response(&r.Request)})
		s.send(&godap.TerminatedEvent{Event: event("terminated")})
	case *godap.ContinueRequest, *godap.NextRequest, *godap.StepInRequest, *godap.StepOutRequest,
		*godap.StepBackRequest, *godap.ReverseContinueRequest, *godap.PauseRequest,
		*godap.RestartFrameRequest, *godap.GotoRequest, *godap.RestartRequest,
		*godap.SetVariableRequest, *godap.SetExpressionRequest, *godap.WriteMemoryRequest,
		*godap.TerminateThreadsRequest:
		s.errorResponse(m.GetRequest(), errNotRunning, notRunning)
	default:
		s.handleInspection(m)
	}
}

// handleInspection answers the requests that read the dump.
func (s *Server) handleInspection(m godap.RequestMessage) {
	if s.model == nil {
		switch m.(type) {
		case *godap.ThreadsRequest:
			// VS Code asks for threads before the stop arrives.
			s.send(&godap.ThreadsResponse{Response: response(m.GetRequest()), Body: godap.ThreadsResponseBody{Threads: []godap.Thread{}}})
		default:
			s.errorResponse(m.GetRequest(), errNoDump, "no dump is open yet: launch with a coreFile first")
		}
		return
	}
	switch r := m.(type) {
	case *godap.ThreadsRequest:
		s.onThreads(r)
	case *godap.StackTraceRequest:
		s.onStackTrace(r)
	case *godap.ScopesRequest:
		s.onScopes(r)
	case *godap.VariablesRequest:
		s.onVariables(r)
	case *godap.EvaluateRequest:
		s.onEvaluate(r)
	case *godap.ExceptionInfoRequest:
		s.onExceptionInfo(r)
	case *godap.ReadMemoryRequest:
		s.onReadMemory(r)
	case *godap.DisassembleRequest:
		s.onDisassemble(r)
	case *godap.SourceRequest:
		s.onSource(r)
	case *godap.ModulesRequest:
		s.onModules(r)
	case *godap.LoadedSourcesRequest:
		s.send(&godap.LoadedSourcesResponse{Response: response(m.GetRequest()), Body: godap.LoadedSourcesResponseBody{Sources: []godap.Source{}}})
	default:
		s.errorResponse(m.GetRequest(), errUnsupported, "faultline dap does not support the %q request", m.GetRequest().Command)
	}
}

func (s *Server) onInitialize(r *godap.InitializeRequest) {
	resp := &godap.InitializeResponse{Response: response(&r.Request)}
	resp.Body = godap.Capabilities{
		SupportsConfigurationDoneRequest: true,
		SupportsEvaluateForHovers:        true,
		SupportsExceptionInfoRequest:     true,
		SupportsReadMemoryRequest:        true,
		SupportsDisassembleRequest:       true,
		SupportsDelayedStackTraceLoading: true,
		SupportsModulesRequest:           true,
		SupportsTerminateRequest:         true,
		SupportsValueFormattingOptions:   true,
		SupportsSteppingGranularity:      false,
	}
	s.send(resp)
	s.send(&godap.InitializedEvent{Event: event("initialized")})
}

func (s *Server) onSetBreakpoints(r *godap.SetBreakpointsRequest) {
	resp := &godap.SetBreakpointsResponse{Response: response(&r.Request)}
	resp.Body.Breakpoints = unverified(len(r.Arguments.Breakpoints))
	s.send(resp)
}

// unverified answers n breakpoints: none can be hit in a dump.
func unverified(n int) []godap.Breakpoint {
	out := make([]godap.Breakpoint, n)
	for i := range out {
		out[i] = godap.Breakpoint{Verified: false, Message: notRunning}
	}
	return out
}
