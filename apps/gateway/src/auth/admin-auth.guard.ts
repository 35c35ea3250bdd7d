import { timingSafeEqual, createHash } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { AuthError } from './auth.errors.js';
import { bearerToken } from './bearer-token.js';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

@Injectable()
export class AdminAuthGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = digest(config.adminKey);
  }

  canActivate(context: ExecutionContext): boolean {
    const token = bearerToken(context.switchToHttp().getRequest<FastifyRequest>());
    if (!token) throw AuthError.missing();
    // Compare fixed-length digests so the comparison is constant-time at any length.
    if (!timingSafeEqual(digest(token), this.expected)) throw AuthError.invalidAdmin();
    return true;
  }
}
