// The controller's structured logger as its parts take it (cli/controller.ts makes the real one): a
// type only, low in the house so the reconcilers, informers and the autoscaler all share it.
export interface ControllerLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}
