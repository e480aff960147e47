-- Paged frames (issue 14 item 3), in a real Neovim: the recursion core has
-- about 30,800 frames of descend(), more than faultline/threads sends at
-- once (64 by default). :FaultlineThreads lists the first 1000 and says
-- how many more there are; :FaultlineUp reaches a frame past the first
-- page. test.lua calls the returned function with its record and check.
return function(record, check)
  local fl = require('faultline')
  local opened
  fl.open('cores/recursion.core.gz', 'bin/recursion', function(sum)
    opened = sum
  end)
  if not check('paging: recursion core opened', 30000, function()
    return opened, 'not opened'
  end) then
    return
  end

  fl.quickfix(nil)
  check('paging: :FaultlineThreads lists 1000 frames and a line naming the ~29,800 more', 20000, function()
    local items = vim.fn.getqflist()
    local last = items[#items]
    local more = last and tonumber((last.text or ''):match('^… (%d+) more frames'))
    return (#items == 1001 and more and more > 29000 and items[1000].text:find('^#999 descend') ~= nil) or nil,
      #items .. ' items, last ' .. vim.inspect(last and last.text)
  end)

  local notes = {}
  local notify = vim.notify
  vim.notify = function(msg, level, ...)
    table.insert(notes, msg)
    return notify(msg, level, ...)
  end
  vim.cmd('edit recursion.c')
  fl.frame_index = nil
  vim.cmd('200FaultlineUp')
  check(':200FaultlineUp reaches #200 descend (past the first page) at recursion.c:11', 20000, function()
    local line = vim.api.nvim_win_get_cursor(0)[1]
    local said = notes[#notes] or ''
    return (said:find('#200 descend', 1, true) and line == 11) or nil,
      string.format('%s:%d, last message %q', vim.fn.expand('%:t'), line, said)
  end)
  vim.notify = notify
end
