import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { DrydockError } from '@drydock/core';

export const NETWORK_OPTION_DESCRIPTION =
  'The hosts its code may reach through the platform\'s egress proxy, within the tenant\'s ceiling (docs/network.md): {"allow": ["pypi.org", "*.example.com", "api.example.com:8443"]}. false or absent: no network. 422 NETWORK_NOT_ALLOWED names entries outside the ceiling; 400 INVALID_NETWORK_POLICY a malformed one.';

// The `network` property of a request body: false, or {allow: [...]}; checked by
// networkOption (class-validator has no union of a boolean and an object).
export function NetworkOption(description = NETWORK_OPTION_DESCRIPTION) {
  return applyDecorators(
    ApiPropertyOptional({
      description,
      oneOf: [{ type: 'boolean', enum: [false] }, { type: 'object', required: ['allow'], properties: { allow: { type: 'array', items: { type: 'string' }, maxItems: 100 } } }],
    }),
    Allow(),
  );
}

// What a body's `network` asks for: null for none; 403 NETWORK_FORBIDDEN for `true` (no
// network is "anything"); 400 INVALID_NETWORK_POLICY for any other shape.
export function networkOption(value: unknown, field = 'network'): { allow: unknown[] } | null {
  if (value === undefined || value === null || value === false) return null;
  if (value === true) {
    throw new DrydockError('NETWORK_FORBIDDEN', `"${field}": true is not a policy: name the hosts the code may reach, {"allow": ["pypi.org"]}, or omit it for no network.`, 403);
  }
  const allow = (value as { allow?: unknown }).allow;
  if (typeof value !== 'object' || Array.isArray(value) || !Array.isArray(allow) || Object.keys(value).some((k) => k !== 'allow')) {
    throw new DrydockError('INVALID_NETWORK_POLICY', `"${field}" must be false or {"allow": [host patterns]}.`, 400, { problems: [`${field} must be false or {"allow": [...]}`] });
  }
  return { allow };
}
