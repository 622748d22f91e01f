/** Resolved dependencies handed to every route plugin (deps + config with defaults applied). */
import type { ApiConfig, ApiDeps } from './ports.js';

export interface RouteContext extends ApiDeps {
  cfg: ApiConfig;
  newId: () => string;
}
