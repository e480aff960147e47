-- nvim-dap integration: `faultline dap` (the post-mortem debug adapter) as
-- nvim-dap's adapter "faultline", a launch configuration that asks for the
-- core dump, and :FaultlineDebug CORE [EXE]. Nothing here runs unless
-- nvim-dap (require('dap')) is installed.
local M = {}

--- The filetypes whose nvim-dap configurations get "Debug core dump (faultline)".
M.filetypes = { 'c', 'cpp', 'cuda', 'rust', 'zig', 'python' }

local function abspath(p)
  return vim.fn.fnamemodify(vim.fn.expand(p), ':p')
end

--- launch_config is the launch request for a dump (nvim-dap passes its
--- fields as the launch arguments).
function M.launch_config(config, core, exe)
  return {
    type = 'faultline',
    request = 'launch',
    name = 'Debug core dump (faultline)',
    coreFile = core,
    program = exe,
    cwd = vim.fn.getcwd(),
    -- An empty Lua table encodes as a JSON array: send an object.
    sourceMap = next(config.source_map or {}) and config.source_map or vim.empty_dict(),
    debugDirs = config.debug_dirs,
    -- setup{offline=true}: no debuginfod in the debug session either.
    offline = config.offline == true,
    workspaceFolders = { config.root_dir or vim.fn.getcwd() },
  }
end

--- on_machine tells whether frame's source is a file of this machine
--- that the adapter did not de-emphasize.
local function on_machine(frame)
  local s = frame.source
  return s ~= nil and s.path ~= nil and (s.sourceReference or 0) == 0 and s.presentationHint ~= 'deemphasize'
    and vim.fn.filereadable(s.path) == 1
end

--- offer_disassembly makes a frame whose file is not on this machine (a
--- libc frame: the adapter keeps DWARF's name, path and line) open the
--- frame's disassembly document, the related source the adapter gives
--- (source.sources[1], its pc line in adapterData.line); the source's name
--- keeps the file and line for nvim-dap's frame list.
local function offer_disassembly(frame)
  local s = frame.source
  local doc = s and s.sources and s.sources[1]
  if not doc or (doc.sourceReference or 0) == 0 or (s.sourceReference or 0) ~= 0 then
    return
  end
  if s.path and vim.fn.filereadable(s.path) == 1 then
    return
  end
  frame.source = {
    name = string.format('%s:%d (not on this machine: disassembly)', s.name or '?', frame.line or 0),
    path = s.path,
    sourceReference = doc.sourceReference,
    presentationHint = 'deemphasize',
    origin = s.origin,
  }
  frame.line = type(doc.adapterData) == 'table' and doc.adapterData.line or 1
  frame.column = 1
end

--- listen adds nvim-dap listeners for faultline sessions: frames whose
--- file is not here open their disassembly; after a stop the focus moves
--- to the first frame with source on this machine, as VS Code focuses it
--- (nvim-dap focuses the first frame with any source: libc's for an abort).
function M.listen(dap)
  local stopped = {}
  local function ours(session)
    return session and session.config and session.config.type == 'faultline'
  end
  dap.listeners.after.event_stopped['faultline'] = function(session)
    if ours(session) then
      stopped[session] = true
    end
  end
  dap.listeners.before.stackTrace['faultline'] = function(session, err, body)
    if ours(session) and not err and body then
      for _, f in ipairs(body.stackFrames or {}) do
        offer_disassembly(f)
      end
    end
  end
  dap.listeners.after.stackTrace['faultline'] = function(session, err, body)
    if not ours(session) or err or not body or not stopped[session] then
      return
    end
    stopped[session] = nil
    local cur = session.current_frame
    if cur and on_machine(cur) then
      return
    end
    for _, f in ipairs(body.stackFrames or {}) do
      if on_machine(f) then
        session:_frame_set(f)
        return
      end
    end
  end
end

--- register adds the adapter and the configurations to dap (nvim-dap's module).
function M.register(dap, config)
  dap.adapters = dap.adapters or {}
  dap.configurations = dap.configurations or {}
  dap.adapters.faultline = { type = 'executable', command = config.cmd[1], args = { 'dap' } }
  if type(dap.listeners) == 'table' then
    M.listen(dap)
  end
  local asked = M.launch_config(config, function()
    return abspath(vim.fn.input('Core dump: ', vim.fn.getcwd() .. '/', 'file'))
  end, function()
    local p = vim.fn.input('Executable (empty: the one the core names): ', '', 'file')
    return p ~= '' and abspath(p) or nil
  end)
  for _, ft in ipairs(M.filetypes) do
    local list = {}
    for _, c in ipairs(dap.configurations[ft] or {}) do
      if c.type ~= 'faultline' then
        table.insert(list, c)
      end
    end
    table.insert(list, asked)
    dap.configurations[ft] = list
  end
end

--- debug starts a session on a dump (:FaultlineDebug).
function M.debug(config, core, exe)
  local ok, dap = pcall(require, 'dap')
  if not ok then
    vim.notify('faultline: :FaultlineDebug needs nvim-dap (https://github.com/mfussenegger/nvim-dap)', vim.log.levels.ERROR)
    return false
  end
  dap.run(M.launch_config(config, abspath(core), exe and exe ~= '' and abspath(exe) or nil))
  return true
end

--- setup registers with nvim-dap when it is installed and adds :FaultlineDebug.
function M.setup(config)
  vim.api.nvim_create_user_command('FaultlineDebug', function(o)
    M.debug(config, o.fargs[1], o.fargs[2])
  end, { nargs = '+', complete = 'file', desc = 'faultline: debug a core dump post-mortem with nvim-dap' })
  local ok, dap = pcall(require, 'dap')
  if ok and type(dap) == 'table' then
    M.register(dap, config)
    return true
  end
  return false
end

return M
