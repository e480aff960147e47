-- Headless test of the faultline plugin against the real server on a real
-- core dump (testdata/native/cores/null_inline.core.gz). Run by
-- editors/nvim/test/run.sh with the current directory at testdata/native:
--   FAULTLINE_BIN=... FAULTLINE_RESULTS=out.txt nvim --headless -u NONE -i NONE \
--     --cmd 'set rtp^=editors/nvim' -c 'luafile editors/nvim/test/test.lua'
-- Each check writes "ok - name" or "not ok - name: why" to $FAULTLINE_RESULTS.
local results = assert(io.open(assert(os.getenv('FAULTLINE_RESULTS')), 'w'))
local failures = 0

local function record(ok, name, why)
  if ok then
    results:write('ok - ' .. name .. '\n')
  else
    failures = failures + 1
    results:write('not ok - ' .. name .. ': ' .. tostring(why) .. '\n')
  end
  results:flush()
end

--- wait_for polls cond (which returns value or nil, why) for up to ms.
local function wait_for(ms, cond)
  local value, why
  vim.wait(ms, function()
    value, why = cond()
    return value ~= nil and value ~= false
  end, 25)
  return value, why
end

local function check(name, ms, cond)
  local ok, value, why = pcall(wait_for, ms, cond)
  if not ok then
    record(false, name, value)
    return nil
  end
  record(value ~= nil and value ~= false, name, why)
  return value
end

local function bufname_tail()
  return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':t')
end

--- lens_texts are the code-lens texts drawn in buf (virtual text or lines
--- in a code-lens namespace).
local function lens_texts(buf)
  local out = {}
  for name, ns in pairs(vim.api.nvim_get_namespaces()) do
    if name:find('codelens') then
      for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
        local d = m[4] or {}
        local chunks = {}
        for _, c in ipairs(d.virt_text or {}) do
          table.insert(chunks, c[1])
        end
        for _, l in ipairs(d.virt_lines or {}) do
          for _, c in ipairs(l) do
            table.insert(chunks, c[1])
          end
        end
        table.insert(out, { row = m[2], text = table.concat(chunks) })
      end
    end
  end
  return out
end

local cache = vim.fn.tempname()
local fl = require('faultline')
fl.setup({ cmd = { assert(os.getenv('FAULTLINE_BIN')), 'serve' }, cache_dir = cache, open_quickfix = false })

local version = vim.version()
results:write(string.format('# nvim %d.%d.%d\n', version.major, version.minor, version.patch))

vim.cmd('FaultlineOpen cores/null_inline.core.gz bin/null_inline')

-- 1. The culprit file is shown at the culprit line, with an Error there.
check('opens null_inline.cpp at the culprit line 16', 20000, function()
  if bufname_tail() ~= 'null_inline.cpp' then
    return nil, 'buffer is ' .. bufname_tail()
  end
  local line = vim.api.nvim_win_get_cursor(0)[1]
  return line == 16 or nil, 'cursor on line ' .. line
end)
local src = vim.api.nvim_get_current_buf()
check('vim.diagnostic has an Error from faultline on line 16', 20000, function()
  local seen = {}
  for _, d in ipairs(vim.diagnostic.get(src)) do
    table.insert(seen, string.format('%d:%s:%s', d.lnum + 1, d.severity, d.source or ''))
    if d.lnum == 15 and d.severity == vim.diagnostic.severity.ERROR and d.source == 'faultline' then
      return d.message
    end
  end
  return nil, 'diagnostics: ' .. table.concat(seen, ', ')
end)
check('Information diagnostics on the callers (lines 18, 20, 25, 34)', 5000, function()
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get(src, { severity = vim.diagnostic.severity.INFO })) do
    lines[d.lnum + 1] = true
  end
  for _, l in ipairs({ 18, 20, 25, 34 }) do
    if not lines[l] then
      return nil, 'no Information diagnostic on line ' .. l
    end
  end
  return true
end)

-- The client is attached to the frames' files, and only to them.
check('client attached to null_inline.cpp (a frame file)', 10000, function()
  local c = require('faultline.lsp').clients()[1]
  return (c and vim.lsp.buf_is_attached(src, c.id)) or nil, 'not attached'
end)
vim.cmd('split demo.c')
local other = vim.api.nvim_get_current_buf()
vim.wait(300)
do
  local c = require('faultline.lsp').clients()[1]
  record(c ~= nil and not vim.lsp.buf_is_attached(other, c.id), 'client not attached to demo.c (no frame there)',
    'attached to ' .. vim.api.nvim_buf_get_name(other))
end
-- lsp/faultline.lua (vim.lsp.enable on 0.11+): its root_dir admits frame files only.
do
  local file = vim.api.nvim_get_runtime_file('lsp/faultline.lua', false)[1]
  local ok, cfg = pcall(dofile, file or 'lsp/faultline.lua')
  local admitted = {}
  if ok and type(cfg) == 'table' and type(cfg.root_dir) == 'function' then
    ok = pcall(cfg.root_dir, src, function(root) admitted.src = root end)
      and pcall(cfg.root_dir, other, function(root) admitted.other = root end)
  end
  record(ok and cfg.cmd and cfg.cmd[2] == 'serve' and admitted.src ~= nil and admitted.other == nil,
    'lsp/faultline.lua: root_dir admits null_inline.cpp, not demo.c', vim.inspect(admitted))
end
vim.cmd('close')

-- 2. Code lenses are drawn on the frame lines.
check('code lens "#0 value_of" drawn above line 16', 20000, function()
  vim.cmd('redraw!')
  local texts = lens_texts(src)
  local all = {}
  for _, t in ipairs(texts) do
    if t.row == 15 and t.text:find('#0 value_of', 1, true) then
      return t.text
    end
    table.insert(all, (t.row + 1) .. ':' .. t.text)
  end
  return nil, 'lenses: ' .. table.concat(all, ' | ')
end)

-- A picture of the crash as Neovim draws it, for the README: :TOhtml (0.10+)
-- renders the buffer with its diagnostics and lenses; the VS Code stage
-- photographs it in Chromium.
local html_dir = os.getenv('FAULTLINE_HTML')
if html_dir and vim.fn.has('nvim-0.12') == 1 then
  vim.cmd('set number')
  vim.cmd('colorscheme default')
  vim.cmd('redraw!')
  local ok, lines = pcall(function()
    vim.cmd('packadd nvim.tohtml')
    return require('tohtml').tohtml(0, { title = 'faultline in Neovim' })
  end)
  if ok then
    vim.fn.writefile(lines, html_dir .. '/nvim-culprit.html')
  else
    results:write('# tohtml failed: ' .. tostring(lines) .. '\n')
  end
end

-- 3. Running a lens: "↑ caller #1 next_value" jumps to line 18.
local ui_select = vim.ui.select
vim.ui.select = function(items, opts, on_choice)
  for _, it in ipairs(items) do
    local title = (it.lens and it.lens.command or it.command or {}).title or ''
    if title:find('caller #1', 1, true) then
      return on_choice(it)
    end
  end
  on_choice(nil)
end
vim.api.nvim_win_set_cursor(0, { 16, 0 })
vim.lsp.codelens.run()
check('running the caller lens moves to next_value, line 18', 20000, function()
  local line = vim.api.nvim_win_get_cursor(0)[1]
  return (bufname_tail() == 'null_inline.cpp' and line == 18) or nil, bufname_tail() .. ':' .. line
end)
vim.ui.select = ui_select

-- 4. :FaultlineThreads puts the frames in the quickfix list; :cnext walks them.
vim.cmd('FaultlineThreads')
local qf = check('quickfix list holds the crashing thread frames', 20000, function()
  local l = vim.fn.getqflist({ items = 0, title = 0 })
  if #l.items < 5 then
    return nil, #l.items .. ' items'
  end
  return l
end)
if qf then
  local first = qf.items[1]
  record(first.lnum == 16 and first.type == 'E' and first.text:find('value_of', 1, true) ~= nil,
    'first quickfix entry is the culprit value_of at line 16', vim.inspect(first))
  record(qf.title:find('SIGSEGV', 1, true) ~= nil, 'quickfix title names SIGSEGV', qf.title)
  local walked = {}
  vim.cmd('cfirst')
  table.insert(walked, vim.api.nvim_win_get_cursor(0)[1])
  for _ = 1, 4 do
    vim.cmd('cnext')
    table.insert(walked, vim.api.nvim_win_get_cursor(0)[1])
  end
  local got = table.concat(walked, ',')
  record(got == '16,18,20,25,34', ':cfirst/:cnext walk the chain 16,18,20,25,34', got)
end

-- :FaultlineUp / :FaultlineDown (and their keys) walk the frames like gdb.
vim.cmd('edit null_inline.cpp')
vim.api.nvim_win_set_cursor(0, { 1, 0 })
require('faultline').frame_index = nil
vim.cmd('FaultlineUp')
check(':FaultlineUp from the culprit shows its caller next_value, line 18', 10000, function()
  local line = vim.api.nvim_win_get_cursor(0)[1]
  return (bufname_tail() == 'null_inline.cpp' and line == 18) or nil, bufname_tail() .. ':' .. line
end)
vim.cmd('execute "normal ]F"')
check('the ]F key goes up once more, line 20', 10000, function()
  local line = vim.api.nvim_win_get_cursor(0)[1]
  return line == 20 or nil, bufname_tail() .. ':' .. line
end)
vim.cmd('2FaultlineDown')
check(':2FaultlineDown goes back to the culprit, line 16', 10000, function()
  local line = vim.api.nvim_win_get_cursor(0)[1]
  return line == 16 or nil, bufname_tail() .. ':' .. line
end)

-- 5. :FaultlineReport writes and shows the markdown report.
vim.cmd('FaultlineReport')
check('report opened as markdown naming SIGSEGV and null_inline.cpp:16', 20000, function()
  local name = vim.api.nvim_buf_get_name(0)
  if not name:match('%.md$') then
    return nil, 'buffer is ' .. name
  end
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  return (text:find('SIGSEGV', 1, true) and text:find('null_inline.cpp:16', 1, true)) or nil, text:sub(1, 200)
end)

-- :help works without :helptags (doc/tags ships with the plugin).
do
  local ok, e = pcall(vim.cmd, 'help :FaultlineUp')
  record(ok and bufname_tail() == 'faultline.txt', ':help :FaultlineUp opens faultline.txt', tostring(e) .. ' ' .. bufname_tail())
  if ok then
    vim.cmd('close')
  end
end

-- :checkhealth faultline finds the server and the running client.
do
  local ok, e = pcall(vim.cmd, 'checkhealth faultline')
  local text = ok and table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n') or tostring(e)
  record(ok and text:find('faultline', 1, true) ~= nil and text:find('client %d+ running') ~= nil
    and text:find('ERROR', 1, true) == nil,
    ':checkhealth faultline reports the server and a running client without errors', text:sub(1, 400))
end

-- 6. nvim-dap registration. nvim-dap itself is not packaged by Debian or
-- npm (the registries the test machines reach), so a table stands in for
-- its module (the adapters/configurations tables and run() users' configs
-- use); the registered adapter command is then started for real and
-- spoken to in DAP until it reports the crash.
do
  local ran
  package.loaded.dap = { adapters = {}, configurations = { c = { { type = 'gdb', name = 'mine' } } },
    run = function(cfg) ran = cfg end }
  local registered = require('faultline.dap').setup(fl.config)
  local dap = package.loaded.dap
  local a = dap.adapters.faultline
  record(registered and a and a.type == 'executable' and a.command == os.getenv('FAULTLINE_BIN') and a.args[1] == 'dap',
    'nvim-dap adapter "faultline" runs `faultline dap`', vim.inspect(a))
  local names = {}
  for _, c in ipairs(dap.configurations.cpp or {}) do
    table.insert(names, c.type .. ':' .. c.name)
  end
  record(#dap.configurations.c == 2 and dap.configurations.c[1].name == 'mine' and names[1] == 'faultline:Debug core dump (faultline)',
    'launch configurations added for c/cpp, the user\'s kept', table.concat(names, ', '))
  vim.cmd('FaultlineDebug cores/null_inline.core.gz bin/null_inline')
  record(ran and ran.type == 'faultline' and ran.request == 'launch' and ran.coreFile:sub(1, 1) == '/'
    and ran.coreFile:match('cores/null_inline%.core%.gz$') and ran.program:match('bin/null_inline$'),
    ':FaultlineDebug runs a launch with absolute coreFile and program', vim.inspect(ran))

  -- Start the adapter as nvim-dap would and walk initialize → launch →
  -- configurationDone → stopped → stackTrace.
  local buf, msgs, seq = '', {}, 0
  local job = vim.fn.jobstart({ a.command, unpack(a.args) }, {
    on_stdout = function(_, data)
      buf = buf .. table.concat(data, '\n')
      while true do
        local hlen, len = buf:match('^Content%-Length: (%d+)\r\n\r\n()')
        if not hlen then break end
        local n = tonumber(hlen)
        if #buf < len + n - 1 then break end
        table.insert(msgs, vim.fn.json_decode(buf:sub(len, len + n - 1)))
        buf = buf:sub(len + n)
      end
    end,
  })
  local function send(command, arguments)
    seq = seq + 1
    local body = vim.fn.json_encode({ seq = seq, type = 'request', command = command, arguments = arguments })
    vim.fn.chansend(job, 'Content-Length: ' .. #body .. '\r\n\r\n' .. body)
    return seq
  end
  local function find(pred)
    for _, m in ipairs(msgs) do
      if pred(m) then return m end
    end
  end
  send('initialize', { adapterID = 'faultline', linesStartAt1 = true, columnsStartAt1 = true })
  send('launch', ran)
  send('configurationDone', vim.empty_dict())
  local stopped = check('faultline dap (started from the registration) stops with reason exception', 60000, function()
    local e = find(function(m) return m.type == 'event' and m.event == 'stopped' end)
    return e and e.body.reason == 'exception' and e or nil, #msgs .. ' messages'
  end)
  if stopped then
    local st = send('stackTrace', { threadId = stopped.body.threadId })
    local trace = check('its stackTrace starts value_of at null_inline.cpp:16', 20000, function()
      local r = find(function(m) return m.type == 'response' and m.request_seq == st end)
      local f = r and r.body.stackFrames[1]
      return f and f.name == 'value_of' and f.line == 16 and f.source.path:match('null_inline%.cpp$') and r or nil,
        vim.inspect(f)
    end)
    -- The frames nvim-dap would list, one "name file:line" a line, for the
    -- VS Code run to compare with its Call Stack (editors/test.sh passes
    -- this directory to e2e.mjs as --nvim-frames).
    if trace and html_dir then
      local lines = {}
      for _, f in ipairs(trace.body.stackFrames) do
        table.insert(lines, string.format('%s %s:%d', f.name, f.source and f.source.path and
          vim.fn.fnamemodify(f.source.path, ':t') or '?', f.line))
      end
      vim.fn.writefile(lines, string.format('%s/dap-frames-%d.%d.%d.txt', html_dir, version.major, version.minor, version.patch))
    end
  end
  send('disconnect', vim.empty_dict())
  record(vim.fn.jobwait({ job }, 10000)[1] == 0, 'faultline dap exits 0 after disconnect', 'job still running or failed')
  package.loaded.dap = nil
end

-- nvim-dap: frames without source, the focus, offline (dapfocus.lua, issue 26).
dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/dapfocus.lua')(
  record, check, assert(os.getenv('FAULTLINE_BIN')))

-- Frames without local source open read-only documents (framedoc.lua, issue 14).
dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/framedoc.lua')(record, check)
-- Deep stacks come in pages (paging.lua, issue 14).
dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/paging.lua')(record, check)

-- Source lookup with no workspace (lookup.lua, issue 14).
dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/lookup.lua')(
  record, check, assert(os.getenv('FAULTLINE_BIN')))

results:write(string.format('# %d failed\n', failures))
results:close()
vim.fn.delete(cache, 'rf')
vim.cmd(failures == 0 and 'qa!' or 'cquit! 1')
