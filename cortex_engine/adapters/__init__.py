"""The faces over the one engine: the command line (`cli`, its command table, completion and handlers), the MCP
server (`serve`, `mcp_server`, `mcp_transport`, `wire`) and the hook entry. Each is thin: anything two of them need
lives in the engine (`cortex_engine.engine`, `cortex_engine.results`)."""
