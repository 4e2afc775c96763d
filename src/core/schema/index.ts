export * from "./accounts";
export * from "./tasks";
export * from "./planner";
export * from "./attachments";
export * from "./backup";
export * from "./reminders";
