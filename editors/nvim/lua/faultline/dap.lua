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

--- register adds the adapter and the configurations to dap (nvim-dap's module).
function M.register(dap, config)
  dap.adapters = dap.adapters or {}
  dap.configurations = dap.configurations or {}
  dap.adapters.faultline = { type = 'executable', command = config.cmd[1], args = { 'dap' } }
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
