export * from "./accounts";
export * from "./tasks";
export * from "./planner";
export * from "./attachments";
export * from "./backup";
export * from "./import";
export * from "./snapshots";
export * from "./reminders";
