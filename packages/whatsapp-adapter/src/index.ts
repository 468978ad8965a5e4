export * as CloudTransport from "./cloud/CloudTransport.ts"
export * as GraphErrors from "./cloud/GraphErrors.ts"
export * as SimulatorTransport from "./simulator/SimulatorTransport.ts"
