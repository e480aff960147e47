-- nvim-dap and frames without source (issue 26 items 4, 5, 1), in a real
-- Neovim with the real `faultline dap`: the assert core stops in libc
-- (pthread_kill, whose sources are not on this machine) six frames above
-- buffer_append (assert_abort.c:11). nvim-dap itself is not packaged by
-- the registries the test machines reach, so a table stands in for its
-- module as in test.lua: its listeners tables (auto-created per request
-- and event, as nvim-dap's), and the steps nvim-dap's Session:event_stopped
-- takes (stackTrace, get_top_frame: the first frame with a source,
-- current_frame) between the listeners it calls. Checked: the libc frames
-- keep their file and line and open their disassembly document (the pc's
-- line), the focus moves to buffer_append as VS Code's does, and the launch
-- sends "offline" from setup{offline=true}. test.lua calls the returned
-- function with its record, check and the adapter command.
local function auto()
  return setmetatable({}, { __index = function(t, k) rawset(t, k, {}); return rawget(t, k) end })
end

return function(record, check, bin)
  local dap = { adapters = {}, configurations = {}, listeners = { before = auto(), after = auto() } }
  package.loaded.dap = dap
  local cfg = vim.tbl_extend('force', require('faultline').config, { cmd = { bin, 'serve' }, offline = true })
  require('faultline.dap').register(dap, cfg)
  local launch = require('faultline.dap').launch_config(cfg, vim.fn.fnamemodify('cores/assert_abort.core.gz', ':p'),
    vim.fn.fnamemodify('bin/assert_abort', ':p'))
  record(launch.offline == true, 'setup{offline=true} puts "offline": true in the launch', vim.inspect(launch))

  -- A debuginfod stand-in on 127.0.0.1 that counts the requests it gets
  -- (and answers 404): DEBUGINFOD_URLS of the adapter points at it.
  local uv = vim.loop
  local requests = 0
  local server = uv.new_tcp()
  server:bind('127.0.0.1', 0)
  server:listen(16, function()
    local c = uv.new_tcp()
    server:accept(c)
    c:read_start(function(_, data)
      if data and data:match('^GET ') then
        requests = requests + 1
        c:write('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n', function() c:close() end)
      elseif not data then
        c:close()
      end
    end)
  end)
  local url = 'http://127.0.0.1:' .. server:getsockname().port
  -- A cache of its own: a miss another run cached would keep the client quiet.
  local env = { DEBUGINFOD_URLS = url, DEBUGINFOD_CACHE_PATH = vim.fn.tempname() }
  local function start(on_stdout)
    return vim.fn.jobstart({ bin, 'dap' }, { on_stdout = on_stdout, env = env })
  end

  local buf, msgs, seq = '', {}, 0
  local job = vim.fn.jobstart({ bin, 'dap' }, {
    env = env,
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
  local function response(s)
    for _, m in ipairs(msgs) do
      if m.type == 'response' and m.request_seq == s then return m end
    end
  end
  local function call(listeners, ...)
    for _, l in pairs(listeners) do l(...) end
  end
  send('initialize', { adapterID = 'faultline', linesStartAt1 = true, columnsStartAt1 = true })
  send('launch', launch)
  send('configurationDone', vim.empty_dict())
  local stopped = check('nvim-dap: the assert core stops with reason exception', 60000, function()
    for _, m in ipairs(msgs) do
      if m.type == 'event' and m.event == 'stopped' then return m end
    end
    return nil, #msgs .. ' messages'
  end)
  if not stopped then
    vim.fn.jobstop(job)
    return
  end
  local session = { config = launch }
  function session:_frame_set(f) self.current_frame = f end
  call(dap.listeners.after.event_stopped, session, stopped.body)
  local req = { threadId = stopped.body.threadId, startFrame = 0 }
  local st = send('stackTrace', req)
  local r = check('nvim-dap: stackTrace answers', 20000, function() return response(st) end)
  if not r then
    vim.fn.jobstop(job)
    return
  end
  call(dap.listeners.before.stackTrace, session, nil, r.body, req)
  for _, f in ipairs(r.body.stackFrames) do -- nvim-dap's get_top_frame
    if f.source then session.current_frame = f break end
  end
  call(dap.listeners.after.stackTrace, session, nil, r.body, req)

  local top = r.body.stackFrames[1]
  local name = top.source and top.source.name or ''
  record(name:match('^pthread_kill%.c:%d+ %(not on this machine: disassembly%)$') ~= nil and top.source.sourceReference > 0,
    'nvim-dap: libc frame #0 keeps its file and line and opens its disassembly', vim.inspect(top.source))
  if top.source and top.source.sourceReference then
    local src = send('source', { source = top.source, sourceReference = top.source.sourceReference })
    check('nvim-dap: the disassembly document has the pc on the frame\'s line', 20000, function()
      local res = response(src)
      local line = res and vim.split(res.body.content, '\n')[top.line]
      return line and line:sub(1, 5) == '=> 0x' or nil, vim.inspect(line)
    end)
  end
  local cur = session.current_frame or {}
  record(cur.name == 'buffer_append' and cur.line == 11 and (cur.source.path or ''):match('assert_abort%.c$') ~= nil,
    'nvim-dap focuses buffer_append at assert_abort.c:11 (the first frame with source), as VS Code does',
    vim.inspect({ name = cur.name, line = cur.line, source = cur.source }))
  send('disconnect', vim.empty_dict())
  vim.fn.jobwait({ job }, 10000)
  record(requests == 0, 'nvim-dap: the offline session asked the debuginfod on 127.0.0.1 nothing',
    requests .. ' requests')

  -- The positive control: a launch without offline asks it (for the
  -- debug file of a program stripped of its DWARF).
  local stripped = vim.fn.tempname()
  vim.fn.system({ 'strip', '--strip-debug', '-o', stripped, 'bin/assert_abort' })
  launch.offline, launch.program = false, stripped
  msgs, buf, seq = {}, '', 0
  job = start(function(_, data)
    buf = buf .. table.concat(data, '\n')
    while true do
      local hlen, len = buf:match('^Content%-Length: (%d+)\r\n\r\n()')
      if not hlen then break end
      local n = tonumber(hlen)
      if #buf < len + n - 1 then break end
      table.insert(msgs, vim.fn.json_decode(buf:sub(len, len + n - 1)))
      buf = buf:sub(len + n)
    end
  end)
  send('initialize', { adapterID = 'faultline', linesStartAt1 = true, columnsStartAt1 = true })
  send('launch', launch)
  send('configurationDone', vim.empty_dict())
  check('nvim-dap: without offline the session asks the debuginfod on 127.0.0.1 (the positive control)', 60000, function()
    return requests > 0 or nil, requests .. ' requests'
  end)
  send('disconnect', vim.empty_dict())
  vim.fn.jobwait({ job }, 10000)
  server:close()
  package.loaded.dap = nil
end
