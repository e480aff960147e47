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

local started_id -- 0.7: the one client started with start_client

--- attach makes sure a faultline client runs for bufnr (started when
--- needed) and returns it.
function M.attach(bufnr, opts, handlers)
  local cfg = client_config(opts, handlers)
  if has('0.8') then
    if not buffer_ok(bufnr) and #M.clients() > 0 then
      return M.clients()[1]
    end
    local id = vim.lsp.start(cfg, { bufnr = bufnr })
    return id and vim.lsp.get_client_by_id(id)
  end
  -- 0.7
  if not started_id or not vim.lsp.get_client_by_id(started_id) then
    started_id = vim.lsp.start_client(cfg)
  end
  if started_id and buffer_ok(bufnr) then
    vim.lsp.buf_attach_client(bufnr, started_id)
  end
  return started_id and vim.lsp.get_client_by_id(started_id)
end

--- register arranges for the client to attach to every file buffer.
function M.register(opts, handlers, group)
  if has('0.11') then
    local cfg = client_config(opts, handlers)
    -- vim.lsp.config's root_dir may be a function of the buffer.
    cfg.root_dir = function(_, on_dir)
      on_dir(root_dir(opts))
    end
    cfg.name = nil
    vim.lsp.config(NAME, cfg)
    vim.lsp.enable(NAME)
    -- vim.lsp.enable attaches on FileType; a file with no filetype (or
    -- with filetype detection off) is attached to the running client here.
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
      group = group,
      callback = function(ev)
        vim.schedule(function()
          local c = M.clients()[1]
          if c and buffer_ok(ev.buf) and not c.attached_buffers[ev.buf] then
            vim.lsp.buf_attach_client(ev.buf, c.id)
          end
        end)
      end,
    })
    return
  end
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(ev)
      if buffer_ok(ev.buf) then
        M.attach(ev.buf, opts, handlers)
      end
    end,
  })
end

--- client returns a running client, starting one for the current buffer
--- when there is none.
function M.client(opts, handlers)
  local cs = M.clients()
  if #cs > 0 then
    return cs[1]
  end
  return M.attach(vim.api.nvim_get_current_buf(), opts, handlers)
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
