-- faultline.framedoc: the read-only document of a frame without local
-- source ("<signal handler called>", a libc frame whose sources are not on
-- this machine, "??"). The server names it with a faultline-frame: URI
-- (lenses, faultline/threads' docUri) and returns its text, the
-- disassembly around the frame's pc with its symbol, from
-- faultline/frameDocument. It is shown in a scratch buffer that cannot be
-- modified, one per URI.
local lsp = require('faultline.lsp')

local M = {}

M.scheme = 'faultline-frame'

--- is_uri tells whether uri names a frame document.
function M.is_uri(uri)
  return type(uri) == 'string' and uri:sub(1, #M.scheme + 1) == M.scheme .. ':'
end

--- buffers maps a frame document URI to its buffer.
local buffers = {}

--- buffer returns the buffer for uri (a new scratch buffer the first time).
local function buffer(uri)
  local b = buffers[uri]
  if b and vim.api.nvim_buf_is_valid(b) then
    return b, false
  end
  b = vim.api.nvim_create_buf(true, true)
  buffers[uri] = b
  -- "faultline-frame://…" reads as a URL to Neovim, so the name is kept as is.
  pcall(vim.api.nvim_buf_set_name, b, M.scheme .. '://' .. uri:sub(#M.scheme + 2):gsub('^/+', ''))
  vim.api.nvim_buf_set_var(b, 'faultline_frame_uri', uri)
  return b, true
end

--- fill puts doc's text into b, read-only.
local function fill(b, doc)
  local lines = vim.split(doc.text or '', '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  vim.api.nvim_buf_set_option(b, 'modifiable', true)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(b, 'buftype', 'nofile')
  vim.api.nvim_buf_set_option(b, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(b, 'swapfile', false)
  vim.api.nvim_buf_set_option(b, 'filetype', 'asm')
  vim.api.nvim_buf_set_option(b, 'modifiable', false)
  vim.api.nvim_buf_set_option(b, 'readonly', true)
end

--- show shows b in the current window at 1-based line (the pc's line when
--- line is nil or 0).
local function show(b, line)
  vim.api.nvim_win_set_buf(0, b)
  local last = vim.api.nvim_buf_line_count(b)
  if line and line > 0 then
    vim.api.nvim_win_set_cursor(0, { math.min(line, last), 0 })
  end
end

--- open shows the document uri from client, at line (default: the
--- frame's pc); on_done(ok, err) runs after.
function M.open(client, uri, line, on_done)
  on_done = on_done or function() end
  local b, new = buffer(uri)
  if not new then
    local ok, pc_line = pcall(vim.api.nvim_buf_get_var, b, 'faultline_frame_line')
    show(b, (line and line > 0) and line or (ok and pc_line or 0))
    on_done(true)
    return
  end
  lsp.request(client, 'faultline/frameDocument', { uri = uri }, function(err, doc)
    if err or not doc then
      vim.api.nvim_buf_delete(b, { force = true })
      buffers[uri] = nil
      on_done(false, err)
      return
    end
    fill(b, doc)
    vim.api.nvim_buf_set_var(b, 'faultline_frame_line', doc.line or 0)
    show(b, (line and line > 0) and line or doc.line)
    on_done(true)
  end)
end

return M
