-- metalcapd driven by Neovim's own msgpack-RPC client, headless:
-- sockconnect(), rpcrequest() and rpcnotify().  Neovim runs only its API
-- for a peer, so events are asked for as calls of a function:
-- subscribe {call = 'MetalcapEvent'} makes each one
-- nvim_call_function('MetalcapEvent', [event]).
--
--   MC_SOCK=SOCKET MC_JOB=JOB nvim --headless -u NONE -i NONE -n \
--       -c 'luafile tests/rpc/nvim_client.lua'
--
-- Exits 0 when every check holds (qall!), 1 otherwise (cquit 1).
local sock, job = os.getenv('MC_SOCK'), os.getenv('MC_JOB')
local failures = 0

local function check(ok, what)
  io.stdout:write((ok and 'ok   ' or 'FAIL ') .. what .. '\n')
  if not ok then failures = failures + 1 end
end

local ch = vim.fn.sockconnect('pipe', sock, { rpc = true })
check(ch > 0, 'sockconnect')

local function call(...) return vim.fn.rpcrequest(ch, ...) end

vim.cmd([[
let g:metalcap_events = []
function! MetalcapEvent(ev)
  call add(g:metalcap_events, a:ev)
endfunction
]])

check(call('hello').protocol == 3, 'hello')
local found = false
for _, j in ipairs(call('status')) do found = found or j.name == job end
check(found, 'status')
check(call('status', job)[1].name == job, 'status JOB')
check(#call('profile.list') >= 3, 'profile.list')
check(call('probe', { profile = 'stock' }).status == 'pass', 'probe {profile}')
check(call('probe', job).profile == 'apple9', 'probe JOB')
check(call('subscribe', { call = 'MetalcapEvent' }) == true,
  'subscribe {call}')
check(call('disable', job).unlocked == false, 'disable')
check(call('enable', job).unlocked == true, 'enable')
check(call('profile.set', job, 'apple9').profile == 'apple9', 'profile.set')
check(call('stop', job).desired == 'stopped', 'stop')
check(call('start', job).desired == 'unlocked', 'start')
check(call('restart', job).name == job, 'restart')
check(call('reload') == true, 'reload')

-- rpcrequest shows the code and the message of an error.
local ok, err = pcall(call, 'status', 'nosuchjob')
check(not ok and tostring(err):find('ENOJOB: no job named nosuchjob', 1, true)
  ~= nil, 'error: ' .. tostring(err))

-- A notification is ignored; the channel goes on.
vim.fn.rpcnotify(ch, 'hello')
check(call('hello').protocol == 3, 'after rpcnotify')

-- The events arrive as calls of MetalcapEvent.
local function requests()
  local r = {}
  for _, ev in ipairs(vim.g.metalcap_events) do
    if ev.type == 'change' then table.insert(r, ev.request) end
  end
  return r
end
vim.wait(10000, function()
  local r = requests()
  return r[#r] == 'restart'
end, 20)
check(table.concat(requests(), ',') ==
  'disable,enable,profile.set,stop,start,restart',
  'change events: ' .. table.concat(requests(), ','))

if failures > 0 then
  io.stdout:write(failures .. ' failed\n')
  vim.cmd('cquit 1')
end
vim.cmd('qall!')
