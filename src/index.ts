export * from "./client/index.js";
export * from "./config.js";
export * from "./contract/index.js";
