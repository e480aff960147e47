-- faultline: open core dumps and crash logs in Neovim through
-- `faultline serve` (a language server). See :help faultline.
--
--   require('faultline').setup{}
--   :FaultlineOpen core.gz bin/app   diagnostics on the culprit line, lenses on frames
--   :FaultlineThreads                frames into the quickfix list (:cnext walks the chain)
--   :FaultlineReport                 the markdown report
local lsp = require('faultline.lsp')
local framedoc = require('faultline.framedoc')

local M = {}

--- Defaults; setup{} merges its argument over them.
M.defaults = {
  -- The server command; the binary from PATH unless given.
  cmd = { 'faultline', 'serve' },
  -- Workspace folder the server resolves relative source files against.
  root_dir = nil, -- default: the current directory when the client starts
  -- Server settings (initializationOptions).
  source_map = {}, -- { ['/build/prefix'] = '/local/checkout' }
  debug_dirs = {},
  cache_dir = nil,
  offline = false,
  dumps = {}, -- opened when the server starts: { 'core.gz', { dump = 'core', exe = 'bin/app' } }
  -- Show code lenses on frame lines.
  codelens = true,
  -- Open the quickfix window after :FaultlineThreads.
  open_quickfix = true,
  -- Normal-mode keys for :FaultlineUp and :FaultlineDown (false: none).
  keys = { up = ']F', down = '[F' },
  -- vim.diagnostic.config() for faultline's diagnostics only (nil: leave the global one).
  diagnostic = { virtual_text = true, severity_sort = true, underline = true, signs = true },
}

M.config = vim.deepcopy(M.defaults)

local function notify(msg, level)
  vim.notify('faultline: ' .. msg, level or vim.log.levels.INFO)
end

local function err_text(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

--- show_frame_doc opens the read-only document of a frame without local
--- source (a faultline-frame: URI) at line (0: the frame's pc).
local function show_frame_doc(c, uri, line)
  framedoc.open(c, uri, line, function(ok, err)
    if not ok then
      notify(err_text(err), vim.log.levels.ERROR)
    end
  end)
end

--- jump shows uri at 1-based line in the current window.
local function jump(uri, line)
  if not uri or uri == '' or not line or line < 1 then
    return false
  end
  if framedoc.is_uri(uri) then
    return false
  end
  local path = vim.uri_to_fname(uri)
  if vim.api.nvim_buf_get_name(0) ~= path then
    vim.cmd('edit ' .. vim.fn.fnameescape(path))
  end
  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(0, { math.min(line, last), 0 })
  return true
end

local handlers = {}

--- Client-side handlers for the commands the server puts in code lenses:
--- they run the command on the server, then make sure the editor shows
--- the result (also where window/showDocument is not used).
handlers.commands = {
  ['faultline.gotoFrame'] = function(command, ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    if not client then
      return
    end
    lsp.execute(client, command.command, command.arguments and command.arguments[1], function(err, loc)
      if err then
        notify(err_text(err), vim.log.levels.ERROR)
        return
      end
      if loc and not loc.shown then
        if framedoc.is_uri(loc.uri) then
          show_frame_doc(client, loc.uri, loc.line)
        else
          jump(loc.uri, loc.line)
        end
      end
      lsp.refresh_lenses(client)
    end)
  end,
  ['faultline.selectThread'] = function(command, ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    if not client then
      return
    end
    lsp.execute(client, command.command, command.arguments and command.arguments[1], function(err, sum)
      if err then
        notify(err_text(err), vim.log.levels.ERROR)
        return
      end
      notify(sum.summary)
      lsp.refresh_lenses(client)
    end)
  end,
}

--- Diagnostics name the files of the crashing thread's frames: the client
--- attaches to their buffers (and only to those).
handlers.handlers = {
  ['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
    local default = vim.lsp.diagnostic.on_publish_diagnostics
    default(err, result, ctx, config)
    if result and result.uri and #(result.diagnostics or {}) > 0 then
      lsp.add_frame_files(vim.lsp.get_client_by_id(ctx.client_id), { vim.uri_to_fname(result.uri) })
    end
  end,
}

handlers.on_init = function(client)
  if M.config.diagnostic and vim.lsp.diagnostic.get_namespace then
    vim.diagnostic.config(M.config.diagnostic, vim.lsp.diagnostic.get_namespace(client.id))
  end
end

handlers.on_attach = function(client, bufnr)
  if M.config.codelens and not vim.lsp.codelens.enable then
    -- Before 0.12 lenses are requested by autocommand.
    vim.api.nvim_create_autocmd({ 'BufEnter', 'CursorHold', 'InsertLeave' }, {
      buffer = bufnr,
      group = vim.api.nvim_create_augroup('faultline_lenses_' .. bufnr, { clear = true }),
      callback = function()
        vim.lsp.codelens.refresh()
      end,
    })
    vim.lsp.codelens.refresh()
  end
end

-- The handlers, for tests that run a lens command as Neovim does.
M.__handlers = handlers

local function client()
  local c = lsp.client(M.config, handlers)
  if not c then
    notify('cannot start ' .. table.concat(M.config.cmd, ' ') .. ' (install faultline or set cmd in setup{})',
      vim.log.levels.ERROR)
  end
  return c
end

local function abspath(p)
  return vim.fn.fnamemodify(vim.fn.expand(p), ':p')
end

--- sync_frames records the files of every thread's frames, so that their
--- buffers get the client, then calls on_done(res).
local function sync_frames(c, on_done)
  lsp.request(c, 'faultline/threads', vim.empty_dict(), function(err, res)
    if err or not res then
      return
    end
    local paths = {}
    for _, t in ipairs(res.threads or {}) do
      for _, f in ipairs(t.frames or {}) do
        if f.uri then
          table.insert(paths, vim.uri_to_fname(f.uri))
        end
      end
    end
    lsp.add_frame_files(c, paths)
    if on_done then
      on_done(res)
    end
  end)
end

--- open loads a dump (or crash log) with optional executable; on_done(summary) is called after.
function M.open(dump, exe, on_done)
  local c = client()
  if not c then
    return
  end
  local arg = { dump = abspath(dump) }
  if exe and exe ~= '' then
    arg.exe = abspath(exe)
  end
  lsp.when_ready(c, function()
    notify('opening ' .. arg.dump)
    lsp.execute(c, 'faultline.open', arg, function(err, sum)
      if err then
        -- The server shows the reason with window/showMessage too.
        notify('cannot open ' .. arg.dump .. ': ' .. err_text(err), vim.log.levels.ERROR)
        return
      end
      M.last = sum
      M.frame_index = nil
      if sum.uri then
        lsp.add_frame_files(c, { vim.uri_to_fname(sum.uri) })
      end
      sync_frames(c)
      if not jump(sum.uri, sum.line) and sum.file then
        notify(sum.file .. ' was not found locally: set source_map or open the checkout as cwd',
          vim.log.levels.WARN)
      end
      lsp.refresh_lenses(c)
      notify(sum.summary)
      if on_done then
        on_done(sum)
      end
    end)
  end)
end

--- frame_items turns a thread's frames into quickfix items; frames without
--- a local file stay in the list as text (not valid, so :cnext skips them).
function M.frame_items(thread)
  local items = {}
  for _, f in ipairs(thread.frames) do
    local text = string.format('#%d %s', f.index, f['function'] or f.pc)
    if f.inlined then
      text = text .. ' [inlined]'
    end
    if f.culprit then
      text = text .. ' <- culprit'
    end
    local item = { text = text, type = f.culprit and 'E' or 'I' }
    if f.uri and f.line then
      item.filename = vim.uri_to_fname(f.uri)
      item.lnum = f.line
      item.col = f.column or 0
    else
      local where = {}
      if f.file then
        table.insert(where, f.file .. ':' .. (f.line or '?'))
      end
      if f.module then
        table.insert(where, vim.fn.fnamemodify(f.module, ':t'))
      end
      table.insert(where, f.pc)
      item.text = text .. ' (' .. table.concat(where, ' ') .. ')'
      item.valid = 0
    end
    table.insert(items, item)
  end
  return items
end

--- threads fetches faultline/threads (params: { thread?, startFrame?,
--- levels? }, a page of frames per thread; default the first 64) and calls
--- f(result, client).
function M.threads(f, params)
  local c = client()
  if not c then
    return
  end
  lsp.when_ready(c, function()
    lsp.request(c, 'faultline/threads', params or vim.empty_dict(), function(err, res)
      if err then
        notify(err_text(err), vim.log.levels.ERROR)
        return
      end
      f(res, c)
    end)
  end)
end

--- select_thread makes thread the shown one on the server, then calls f().
local function select_thread(c, thread, f)
  lsp.execute(c, 'faultline.selectThread', { thread = thread }, function(err)
    if err then
      notify(err_text(err), vim.log.levels.ERROR)
      return
    end
    lsp.refresh_lenses(c)
    f()
  end)
end

--- quickfix fills the quickfix list with thread's frames (default: the
--- selected thread), selecting it on the server when it is another one.
function M.quickfix(thread, on_done)
  M.threads(function(res, c)
    if #res.threads == 0 then
      notify('no crash is open (:FaultlineOpen {dump} [exe])', vim.log.levels.WARN)
      return
    end
    local want = thread or res.selectedThread
    local t
    for _, x in ipairs(res.threads) do
      if x.id == want then
        t = x
      end
    end
    if not t then
      notify('the dump has no thread ' .. tostring(want), vim.log.levels.ERROR)
      return
    end
    local function fill()
      local title = string.format('faultline: thread %d%s — %s', t.id, t.crashed and ' (crashed)' or '', res.summary)
      local items = M.frame_items(t)
      if (t.totalFrames or 0) > #t.frames then
        table.insert(items, { text = string.format('… %d more frames (:FaultlineUp walks them)', t.totalFrames - #t.frames),
          valid = 0 })
      end
      vim.fn.setqflist({}, ' ', { title = title, items = items })
      if M.config.open_quickfix then
        vim.cmd('copen')
        vim.cmd('wincmd p')
      end
      if on_done then
        on_done(t)
      end
    end
    -- The list holds up to 1000 frames (the server's largest page).
    local function fetch()
      lsp.request(c, 'faultline/threads', { thread = t.id, levels = 1000 }, function(err, page)
        if not err and page and page.threads and page.threads[1] then
          t = page.threads[1]
        end
        fill()
      end)
    end
    if t.id ~= res.selectedThread then
      select_thread(c, t.id, fetch)
    else
      fetch()
    end
  end)
end

--- pick_thread lets the user choose a thread (vim.ui.select), selects it
--- and lists its frames.
function M.pick_thread()
  M.threads(function(res)
    if #res.threads == 0 then
      notify('no crash is open', vim.log.levels.WARN)
      return
    end
    vim.ui.select(res.threads, {
      prompt = 'faultline: thread',
      format_item = function(t)
        local top = t.frames[1]
        for _, f in ipairs(t.frames) do
          if f.culprit then
            top = f
          end
        end
        return string.format('%s%d%s  %s', t.selected and '* ' or '  ', t.id, t.crashed and ' (crashed)' or '',
          top and (top['function'] or top.pc) or '')
      end,
    }, function(t)
      if t then
        M.quickfix(t.id)
      end
    end)
  end)
end

--- move_frame walks the shown thread's frames like gdb's `up` (delta 1,
--- toward the callers) and `down` (delta -1, toward the crash), showing the
--- frame's line; frames without a local file are named, not opened.
function M.move_frame(delta)
  M.threads(function(res, c)
    local t
    for _, x in ipairs(res.threads or {}) do
      if x.id == res.selectedThread then
        t = x
      end
    end
    if not t or #t.frames == 0 then
      notify('no crash is open (:FaultlineOpen {dump} [exe])', vim.log.levels.WARN)
      return
    end
    if not M.frame_index then
      M.frame_index = 1
      for i, f in ipairs(t.frames) do
        if f.culprit then
          M.frame_index = i
        end
      end
    end
    M.frame_index = math.max(1, math.min(t.totalFrames or #t.frames, M.frame_index + delta))
    local function go(f)
      local name = string.format('#%d %s', f.index, f['function'] or f.pc)
      if f.uri and f.line and jump(f.uri, f.line) then
        notify(name)
      elseif f.docUri then
        show_frame_doc(c, f.docUri)
        notify(name .. ' (no local source: disassembly)')
      else
        notify(name .. ' has no local source (' .. (f.file or f.module or f.pc or '?') .. ')')
      end
    end
    if t.frames[M.frame_index] then
      go(t.frames[M.frame_index])
      return
    end
    -- Past the first page of a deep stack: ask for that one frame.
    lsp.request(c, 'faultline/threads', { thread = t.id, startFrame = M.frame_index - 1, levels = 1 }, function(err, page)
      local f = not err and page and page.threads and page.threads[1] and page.threads[1].frames[1]
      if f then
        go(f)
      else
        notify(err_text(err or 'no such frame'), vim.log.levels.ERROR)
      end
    end)
  end)
end

--- report writes the markdown report and shows it.
function M.report(on_done)
  local c = client()
  if not c then
    return
  end
  lsp.when_ready(c, function()
    lsp.execute(c, 'faultline.report', nil, function(err, res)
      if err then
        notify(err_text(err), vim.log.levels.ERROR)
        return
      end
      if vim.api.nvim_buf_get_name(0) ~= res.path then
        vim.cmd('edit ' .. vim.fn.fnameescape(res.path))
      end
      if on_done then
        on_done(res.path)
      end
    end)
  end)
end

function M.close()
  local c = lsp.clients()[1]
  if c then
    lsp.execute(c, 'faultline.close', nil, function(err)
      if err then
        notify(err_text(err), vim.log.levels.ERROR)
      end
      lsp.refresh_lenses(c)
    end)
  end
end

local function user_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('FaultlineOpen', function(o)
    M.open(o.fargs[1], o.fargs[2])
  end, { nargs = '+', complete = 'file', desc = 'faultline: open a core dump or crash log {dump} [exe]' })
  cmd('FaultlineThreads', function(o)
    M.quickfix(tonumber(o.fargs[1]))
  end, { nargs = '?', desc = "faultline: a thread's frames into the quickfix list [thread]" })
  cmd('FaultlineSelectThread', function()
    M.pick_thread()
  end, { desc = 'faultline: choose the thread shown' })
  cmd('FaultlineReport', function()
    M.report()
  end, { desc = 'faultline: write and show the markdown report' })
  cmd('FaultlineUp', function(o)
    M.move_frame(o.count > 0 and o.count or 1)
  end, { count = true, desc = "faultline: show the caller's frame (like gdb's up)" })
  cmd('FaultlineDown', function(o)
    M.move_frame(-(o.count > 0 and o.count or 1))
  end, { count = true, desc = "faultline: show the callee's frame (like gdb's down)" })
  cmd('FaultlineClose', function()
    M.close()
  end, { desc = 'faultline: close the dump' })
end

--- setup configures the plugin: the server starts for file buffers (and on
--- the first :Faultline* command).
function M.setup(opts)
  opts = opts or {}
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- Lists replace the defaults whole (tbl_deep_extend merges them by index).
  for _, k in ipairs({ 'cmd', 'debug_dirs', 'dumps' }) do
    if opts[k] ~= nil then
      M.config[k] = opts[k]
    end
  end
  if type(M.config.cmd) == 'string' then
    M.config.cmd = { M.config.cmd, 'serve' }
  end
  local group = vim.api.nvim_create_augroup('faultline', { clear = true })
  user_commands()
  if M.config.keys then
    if M.config.keys.up then
      vim.keymap.set('n', M.config.keys.up, '<Cmd>FaultlineUp<CR>', { desc = "faultline: caller's frame" })
    end
    if M.config.keys.down then
      vim.keymap.set('n', M.config.keys.down, '<Cmd>FaultlineDown<CR>', { desc = "faultline: callee's frame" })
    end
  end
  lsp.register(M.config, handlers, group)
  require('faultline.dap').setup(M.config)
  if M.config.codelens and vim.lsp.codelens.enable then
    vim.lsp.codelens.enable(true)
  end
  if #M.config.dumps > 0 then
    -- The server opens them at start; its diagnostics attach the buffers.
    client()
  end
end

return M
