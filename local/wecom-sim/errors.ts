/** Base class of the simulator's own errors (misuse of the simulator, not WeCom errcodes). */
export class SimulatorError extends Error {
  readonly code: string;
  readonly context: Record<string, unknown>;

  constructor(message: string, code: string, context: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SimulatorError';
    this.code = code;
    this.context = context;
  }
}

/** The options passed to `startWecomSimulator` cannot describe a WeCom corp. */
export class SimulatorConfigError extends SimulatorError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, 'SIM_CONFIG_INVALID', context);
    this.name = 'SimulatorConfigError';
  }
}

/** A fault description (programmatic or via `POST /__sim/faults`) is not understood. */
export class InvalidFaultError extends SimulatorError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, 'SIM_FAULT_INVALID', context);
    this.name = 'InvalidFaultError';
  }
}

/** A request to the `/__sim/` inspection API is malformed. */
export class InspectionRequestError extends SimulatorError {
  constructor(message: string, context: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, 'SIM_INSPECTION_BAD_REQUEST', context, options);
    this.name = 'InspectionRequestError';
  }
}
