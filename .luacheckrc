-- luacheck over the scripts of src/redis/scripts as Redis runs them (`npm run lint:lua`):
-- each assembled with its includes and constants (script.ts), in Redis's Lua 5.1.
std = "lua51"
read_globals = { "redis", "KEYS", "ARGV", "cjson", "cmsgpack", "bit", "struct" }
max_line_length = 110
