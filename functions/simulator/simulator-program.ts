/** A program the simulator serves, with its client credentials (fakes, for local use and tests). */
export interface SimulatorProgram {
  readonly programId: string;
  readonly clientId: string;
  readonly clientSecret: string;
}
