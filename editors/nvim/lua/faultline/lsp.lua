-- faultline.lsp: starts `faultline serve` and talks to it, on every Neovim
-- from 0.7 to 0.12:
--   0.7        vim.lsp.start_client, buffers attached by autocommand
--   0.8–0.10   vim.lsp.start from a BufReadPost/BufNewFile autocommand
--   0.11+      vim.lsp.config + vim.lsp.enable
local M = {}

local NAME = 'faultline'

local function has(version)
  return vim.fn.has('nvim-' .. version) == 1
end

M.has = has

--- The running faultline clients (one per root directory).
function M.clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = NAME })
  end
  local out = {}
  for _, c in pairs(vim.lsp.get_active_clients()) do
    if c.name == NAME then
      table.insert(out, c)
    end
  end
  return out
end

--- request sends method with params to client; handler(err, result).
--- 0.11 turned client.request into a method (client:request).
function M.request(client, method, params, handler, bufnr)
  local function h(err, result)
    handler(err, result)
  end
  if has('0.11') then
    return client:request(method, params, h, bufnr)
  end
  return client.request(method, params, h, bufnr)
end

--- execute runs a faultline.* command (workspace/executeCommand) with one
--- argument object.
function M.execute(client, command, arg, handler)
  local params = { command = command, arguments = arg and { arg } or {} }
  return M.request(client, 'workspace/executeCommand', params, handler)
end

--- buffer_ok tells whether bufnr is a normal file buffer the client should see.
local function buffer_ok(bufnr)
  return vim.api.nvim_buf_is_valid(bufnr)
    and vim.api.nvim_buf_get_option(bufnr, 'buftype') == ''
    and vim.api.nvim_buf_get_name(bufnr) ~= ''
end

--- settings are the server's initializationOptions, with empty fields left
--- out so that the JSON encoder never writes an empty object as [].
local function server_settings(opts)
  local s = {}
  if opts.source_map and next(opts.source_map) then
    s.sourceMap = opts.source_map
  end
  if opts.debug_dirs and #opts.debug_dirs > 0 then
    s.debugDirs = opts.debug_dirs
  end
  if opts.cache_dir and opts.cache_dir ~= '' then
    s.cacheDir = opts.cache_dir
  end
  if opts.offline then
    s.offline = true
  end
  if opts.dumps and #opts.dumps > 0 then
    s.dumps = opts.dumps
  end
  if next(s) == nil then
    return vim.empty_dict()
  end
  return s
end

local function root_dir(opts)
  return opts.root_dir or vim.fn.getcwd()
end

--- client_config is the config shared by every start path.
local function client_config(opts, handlers)
  local settings = server_settings(opts)
  return {
    name = NAME,
    cmd = opts.cmd,
    root_dir = root_dir(opts),
    init_options = settings,
    settings = { faultline = settings },
    commands = handlers.commands,
    on_init = handlers.on_init,
    on_attach = handlers.on_attach,
    handlers = handlers.handlers,
  }
end

--- The files that appear in the open crash's frames (absolute paths): the
--- client attaches to buffers of these files only, never to every buffer.
M.frame_files = {}

local function buffer_path(bufnr)
  return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':p')
end

--- is_frame_buffer tells whether bufnr shows a file of the crash's frames.
function M.is_frame_buffer(bufnr)
  return buffer_ok(bufnr) and M.frame_files[buffer_path(bufnr)] == true
end

--- start starts the client without attaching it to any buffer and returns it.
local function start(cfg)
  if has('0.11') then
    local id = vim.lsp.start(cfg, { attach = false })
    return id and vim.lsp.get_client_by_id(id)
  end
  local id = vim.lsp.start_client(cfg)
  return id and vim.lsp.get_client_by_id(id)
end

--- attach_buffer attaches client to bufnr when it shows a frame's file.
function M.attach_buffer(client, bufnr)
  if client and M.is_frame_buffer(bufnr) and not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
end

--- add_frame_files records paths as frame files and attaches client to the
--- loaded buffers that show them.
function M.add_frame_files(client, paths)
  for _, p in ipairs(paths) do
    M.frame_files[vim.fn.fnamemodify(p, ':p')] = true
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      M.attach_buffer(client, b)
    end
  end
end

--- register attaches the running client to every buffer of a frame's file
--- that is read later. On 0.11+ the same rule is the root_dir of the
--- vim.lsp.config entry (lsp/faultline.lua), so vim.lsp.enable('faultline')
--- attaches frame files only.
function M.register(opts, handlers, group)
  if has('0.11') then
    local cfg = client_config(opts, handlers)
    cfg.root_dir = function(bufnr, on_dir)
      if M.is_frame_buffer(bufnr) then
        on_dir(root_dir(opts))
      end
    end
    cfg.name = nil
    vim.lsp.config(NAME, cfg)
    vim.lsp.enable(NAME)
  end
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(ev)
      vim.schedule(function()
        M.attach_buffer(M.clients()[1], ev.buf)
      end)
    end,
  })
end

--- client returns the running client, starting one (attached to no
--- buffer) when there is none.
function M.client(opts, handlers)
  local cs = M.clients()
  if #cs > 0 then
    return cs[1]
  end
  return start(client_config(opts, handlers))
end

--- when_ready calls f(client) once the client has initialized.
function M.when_ready(client, f)
  local ok = vim.wait(10000, function()
    return client.initialized or client.server_capabilities ~= nil and next(client.server_capabilities) ~= nil
  end, 20)
  if not ok then
    vim.notify('faultline: the language server did not initialize in 10 s', vim.log.levels.ERROR)
    return
  end
  f(client)
end

--- refresh_lenses asks for code lenses again in every window showing a
--- buffer the client is attached to (0.12: code lenses are enabled once and
--- follow workspace/codeLens/refresh by themselves).
function M.refresh_lenses(client)
  if vim.lsp.codelens.enable then
    vim.lsp.codelens.enable(true)
    return
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    if client.attached_buffers and client.attached_buffers[buf] then
      if has('0.10') then
        vim.lsp.codelens.refresh({ bufnr = buf })
      elseif buf == vim.api.nvim_get_current_buf() then
        vim.lsp.codelens.refresh()
      end
    end
  end
end

return M
