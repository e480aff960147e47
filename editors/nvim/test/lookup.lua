-- Source lookup with no workspace, in a real Neovim (issue 14): a program
-- compiled here in a temporary build directory (so DW_AT_comp_dir is that
-- directory and the file name src/crash.c) and crashed into a core, opened
-- by a client that has no root: vim.lsp.start (vim.lsp.start_client on
-- 0.7) with no root_dir, which sends rootUri and workspaceFolders null, and
-- on 0.11+ vim.lsp.enable of a config whose root markers match nothing.
-- The culprit's Error diagnostic must land on the comp_dir file.
-- test.lua calls the returned function with its record and check.
local crash_c = [[
struct item { int id; int weight; };

static int __attribute__((noinline)) crash_here(struct item *p, int scale) {
  return p->weight * scale;
}

int main(void) {
  struct item *none = 0;
  return crash_here(none, 3);
}
]]
local crash_line = 4

local function build(record)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. '/src', 'p')
  vim.fn.mkdir(dir .. '/bin', 'p')
  vim.fn.writefile(vim.split(crash_c, '\n'), dir .. '/src/crash.c')
  local out = vim.fn.system({ 'sh', '-c', 'cd "$1" && gcc -g -O0 -o bin/crash src/crash.c', 'sh', dir })
  if vim.v.shell_error == 0 then
    out = vim.fn.system({ 'gdb', '-batch', '-nx', '-ex', 'run', '-ex', 'generate-core-file ' .. dir .. '/core',
      dir .. '/bin/crash' })
  end
  local ok = vim.fn.filereadable(dir .. '/core') == 1
  record(ok, 'no workspace: a program built in a temporary directory and its core', out)
  return ok and dir or nil
end

-- call is client.request / client.stop as a method on 0.11+, a field before.
local function call(client, name, ...)
  if vim.fn.has('nvim-0.11') == 1 then
    return client[name](client, ...)
  end
  return client[name](...)
end

-- open_and_check runs faultline.open through client and checks the
-- diagnostic on dir/src/crash.c.
local function open_and_check(check, label, client_id, dir)
  local client = check(label .. ': client initialized', 20000, function()
    local c = vim.lsp.get_client_by_id(client_id)
    return (c and c.server_capabilities and next(c.server_capabilities) and c) or nil, 'not initialized'
  end)
  if not client then
    return
  end
  local sum, err
  call(client, 'request', 'workspace/executeCommand',
    { command = 'faultline.open', arguments = { { dump = dir .. '/core', exe = dir .. '/bin/crash' } } },
    function(e, result) err, sum = e, result end)
  local src = dir .. '/src/crash.c'
  check(label .. ': faultline.open resolves the culprit to the comp_dir file', 60000, function()
    if err then
      return nil, vim.inspect(err)
    end
    return (sum and sum.uri == vim.uri_from_fname(src) and sum.line == crash_line) or nil,
      'summary ' .. vim.inspect(sum) .. ', workspace_folders ' .. vim.inspect(client.workspace_folders)
  end)
  local buf = vim.uri_to_bufnr(vim.uri_from_fname(src))
  check(label .. ': Error diagnostic on src/crash.c:' .. crash_line, 20000, function()
    local seen = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.lnum == crash_line - 1 and d.severity == vim.diagnostic.severity.ERROR and d.source == 'faultline' then
        return true
      end
      table.insert(seen, (d.lnum + 1) .. ':' .. d.severity)
    end
    return nil, 'diagnostics: ' .. table.concat(seen, ', ')
  end)
  call(client, 'stop')
end

return function(record, check, bin)
  local dir = build(record)
  if not dir then
    return
  end
  local cfg = { name = 'faultline-noroot', cmd = { bin, 'serve' }, init_options = { offline = true } }
  local id
  if vim.fn.has('nvim-0.10') == 1 then
    id = vim.lsp.start(cfg, { attach = false })
  else
    id = vim.lsp.start_client(cfg)
  end
  record(id ~= nil, 'no workspace: client started without root_dir', 'no client id')
  if id then
    open_and_check(check, 'no root_dir (workspaceFolders null)', id, dir)
  end

  if vim.fn.has('nvim-0.11') == 0 then
    return
  end
  -- vim.lsp.enable on a C file outside any root marker.
  vim.lsp.config('faultline_nomarker', { cmd = { bin, 'serve' }, filetypes = { 'c' },
    root_markers = { '.faultline-no-such-marker' }, init_options = { offline = true } })
  vim.lsp.enable('faultline_nomarker')
  local elsewhere = vim.fn.tempname()
  vim.fn.mkdir(elsewhere, 'p')
  vim.cmd('edit ' .. vim.fn.fnameescape(elsewhere .. '/scratch.c'))
  local client = check('vim.lsp.enable without a root marker starts a client', 20000, function()
    local cs = vim.lsp.get_clients({ name = 'faultline_nomarker' })
    return cs[1], 'no client'
  end)
  if client then
    open_and_check(check, 'vim.lsp.enable without a root marker', client.id, dir)
  end
  vim.lsp.enable('faultline_nomarker', false)
end
