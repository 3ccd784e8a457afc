// The MCP server for AI agents (docs/mcp.md): tools over src/app, served on stdio or streamable HTTP.
export type { McpServerOptions } from './server.js';
export { createMcpServer, describeError, FLEET_TOOL_NAMES, TOOL_NAMES } from './server.js';
export type { HttpListen, McpHttpApp, RunningHttpServer } from './transports.js';
export { DEFAULT_SESSION_LIMITS, mcpHttpApp, serveHttp, serveStdio } from './transports.js';
export type { SessionLimits } from './transports.js';
