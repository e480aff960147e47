-- The faultline language server for Neovim 0.11+'s vim.lsp.config /
-- vim.lsp.enable convention:
--
--   vim.lsp.enable('faultline')
--
-- It attaches only to buffers of files that appear in the open crash's
-- frames (the root_dir function below); :FaultlineOpen and the other
-- commands come with require('faultline').setup{}, which sets the same
-- config with the user's options.
return {
  cmd = { 'faultline', 'serve' },
  root_dir = function(bufnr, on_dir)
    local ok, lsp = pcall(require, 'faultline.lsp')
    if ok and lsp.is_frame_buffer(bufnr) then
      on_dir((vim.fs and vim.fs.root and vim.fs.root(bufnr, { '.git' })) or vim.fn.getcwd())
    end
  end,
  init_options = vim.empty_dict(),
}
