/** oauth-register: an operator registers an OAuth integration (its client secret is printed once). */
import { adminClient } from '../admin-client.js';
import { UsageError, type CommandSpec } from '../command.js';
import { printResult } from '../output.js';

interface Registered {
  integration: { id: string; name: string; redirectUri: string; scopes: string[] };
  clientSecret: string;
}

export const oauthRegisterCommand: CommandSpec = {
  name: 'oauth-register',
  summary: 'Register an OAuth integration (prints its integrationId and, once, its client secret)',
  options: {
    name: { type: 'string', description: 'Name shown on the consent screen' },
    'redirect-uri': { type: 'string', description: 'https URL (http only on localhost) the user returns to' },
    scope: { type: 'string', multiple: true, description: 'Scope the integration may ask for: read, trade, withdraw, account (repeatable)' },
    description: { type: 'string', description: 'Optional text shown on the consent screen' },
  },
  details: 'Example: perpx oauth-register --name "Portfolio tracker" --redirect-uri https://tracker.example.com/cb --scope read',
  async run({ options, global }) {
    const name = options.name;
    const redirectUri = options['redirect-uri'];
    const scopes = (options.scope as string[] | undefined) ?? [];
    if (typeof name !== 'string' || typeof redirectUri !== 'string' || scopes.length === 0) {
      throw new UsageError('oauth-register needs --name, --redirect-uri and at least one --scope');
    }
    const body: Record<string, unknown> = { name, redirectUri, scopes };
    if (typeof options.description === 'string') body.description = options.description;
    const r = await (await adminClient(global)).post<Registered>('/api/admin/oauth/integrations', body);
    printResult(global.json, r, () => [
      `integration ${r.integration.id} "${r.integration.name}" (scopes ${r.integration.scopes.join(', ')})`,
      `client secret ${r.clientSecret}   (shown once: store it now)`,
    ].join('\n'));
  },
};
