-- :checkhealth faultline — is the server there, does it run, is a client up.
local M = {}

-- vim.health (0.10+) or the older health module (0.7–0.9).
local health = vim.health or require('health')
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local err = health.error or health.report_error
local info = health.info or health.report_info
local start = health.start or health.report_start

local function check_neovim()
  start('Neovim')
  if vim.fn.has('nvim-0.7') == 1 then
    local v = vim.version()
    ok(string.format('Neovim %d.%d.%d (0.7 or later)', v.major, v.minor, v.patch))
  else
    err('Neovim 0.7 or later is required')
  end
end

local function check_server(cfg)
  start('faultline server')
  local cmd = cfg.cmd or { 'faultline', 'serve' }
  local exe = cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    err(exe .. ' is not executable', {
      'install it: go install github.com/faultline-dev/faultline@latest',
      "or point setup{ cmd = { '/path/to/faultline', 'serve' } } at it",
    })
    return
  end
  local out = vim.fn.system({ exe, 'version' })
  if vim.v.shell_error ~= 0 then
    err(exe .. ' version failed: ' .. vim.trim(out))
    return
  end
  ok(vim.trim(out) .. ' (' .. vim.fn.exepath(exe) .. ')')
end

local function check_client()
  start('faultline client')
  local lsp = require('faultline.lsp')
  local clients = lsp.clients()
  if #clients == 0 then
    info('no faultline client is running (it starts with :FaultlineOpen or the dumps option)')
    return
  end
  for _, c in ipairs(clients) do
    local files = vim.tbl_count(lsp.frame_files)
    ok(string.format('client %d running (root %s); %d frame files, attached to %d buffers', c.id,
      tostring(c.config.root_dir), files, vim.tbl_count(c.attached_buffers or {})))
  end
end

local function check_dap()
  start('debug adapter (optional)')
  if pcall(require, 'dap') then
    ok('nvim-dap is installed: `faultline dap` is registered as the "faultline" adapter')
  else
    info('nvim-dap is not installed; the post-mortem debugger (faultline dap) needs it')
  end
end

function M.check()
  local cfg = require('faultline').config or {}
  check_neovim()
  check_server(cfg)
  check_client()
  check_dap()
end

return M
