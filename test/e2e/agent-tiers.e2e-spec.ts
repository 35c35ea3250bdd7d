import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { AGENT_RUNTIME, ScriptedModelProvider, type AgentRuntime, type ChatScript } from '@drydock/agents';
import { startPlatform, type Platform } from './support/platform.js';

// An agent definition's tier (docs/agent.md): the sessions its threads start run on it,
// and it is refused when set if the deployment does not offer it or the tenant may not
// use it. Its idle action goes the same way to those sessions.
describe('Agent tiers', () => {
  describe('on a deployment that offers gvisor', () => {
    let platform: Platform;
    // The agent's model, scripted per test.
    let script: ChatScript = () => new AIMessage('no script');

    beforeAll(async () => {
      platform = await startPlatform(
        { SANDBOX_GVISOR_RUNTIME: 'runsc', SANDBOX_DEFAULT_TIER: 'runc' },
        { chatModels: new ScriptedModelProvider(() => (turn) => script(turn)) },
      );
    });

    afterAll(async () => {
      await platform?.close();
    });

    it("should start an agent's sessions on its definition's tier", async () => {
      const api = await platform.newTenant();
      const created = await api.post('/v1/agents', { name: 'isolated', tools: ['execute_python'], tier: 'gvisor' });
      expect([created.status, created.body.tier]).toEqual([201, 'gvisor']);
      expect((await api.get(`/v1/agents/${created.body.id}`)).body.tier).toBe('gvisor');
      script = (turn) =>
        turn.step === 0
          ? new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'execute_python', args: { code: 'print(6 * 7)' }, type: 'tool_call' }] })
          : new AIMessage('done');

      const runtime = platform.gateway.get<AgentRuntime>(AGENT_RUNTIME);
      const config = await runtime.runConfig(api.tenantId, 'tier-thread', created.body.id);
      const state = (await runtime.graph.invoke({ messages: [new HumanMessage('compute')] }, config)) as { messages: BaseMessage[] };

      const tool = state.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
      expect(String(tool.content)).toContain('42');
      const session = (await api.get('/v1/sessions')).body.sessions.find((s: { threadId: string }) => s.threadId === 'tier-thread');
      expect(session.tier).toBe('gvisor');
    });

    it("should start an agent's sessions with its definition's idle action, and take null back to the deployment's", async () => {
      const api = await platform.newTenant();
      const created = await api.post('/v1/agents', { name: 'brief', tools: ['execute_python'], tier: 'gvisor', idleAction: 'end' });
      expect([created.status, created.body.idleAction]).toEqual([201, 'end']);
      expect((await api.get(`/v1/agents/${created.body.id}`)).body.idleAction).toBe('end');
      script = (turn) =>
        turn.step === 0
          ? new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'execute_python', args: { code: 'print(6 * 7)' }, type: 'tool_call' }] })
          : new AIMessage('done');

      const runtime = platform.gateway.get<AgentRuntime>(AGENT_RUNTIME);
      const config = await runtime.runConfig(api.tenantId, 'idle-thread', created.body.id);
      const state = (await runtime.graph.invoke({ messages: [new HumanMessage('compute')] }, config)) as { messages: BaseMessage[] };

      const tool = state.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
      expect(String(tool.content)).toContain('42');
      const listed = (await api.get('/v1/sessions')).body.sessions.find((s: { threadId: string }) => s.threadId === 'idle-thread');
      const session = await api.get(`/v1/sessions/${listed.id}`);
      expect([session.status, session.body.idleAction, session.body.tier]).toEqual([200, 'end', 'gvisor']);

      const kept = await api.request('PATCH', `/v1/agents/${created.body.id}`, { json: { instructions: 'be brief' } });
      expect([kept.status, kept.body.idleAction]).toEqual([200, 'end']);
      const cleared = await api.request('PATCH', `/v1/agents/${created.body.id}`, { json: { idleAction: null } });
      expect([cleared.status, cleared.body.idleAction]).toEqual([200, null]);
      const odd = await api.post('/v1/agents', { name: 'odd', idleAction: 'sleep' });
      expect(odd.status).toBe(400);
    });

    it("should refuse a tier the tenant may not use, and take null back to the tenant's default", async () => {
      const api = await platform.newTenant({ tiers: ['runc'] });
      const refused = await api.post('/v1/agents', { name: 'isolated', tier: 'gvisor' });
      expect([refused.status, refused.body.error?.code]).toEqual([422, 'TIER_NOT_ALLOWED']);
      const created = await api.post('/v1/agents', { name: 'plain', tier: 'runc' });
      expect([created.status, created.body.tier]).toEqual([201, 'runc']);
      const cleared = await api.request('PATCH', `/v1/agents/${created.body.id}`, { json: { tier: null } });
      expect([cleared.status, cleared.body.tier]).toEqual([200, null]);
      expect((await api.post('/v1/agents', { name: 'odd', tier: 'kata' })).status).toBe(400);
    });
  });

  describe('on a deployment without gvisor', () => {
    let platform: Platform;

    beforeAll(async () => {
      platform = await startPlatform({ SANDBOX_GVISOR_RUNTIME: '', SANDBOX_DEFAULT_TIER: 'runc' });
    });

    afterAll(async () => {
      await platform?.close();
    });

    it('should refuse an agent definition on the gvisor tier with TIER_NOT_AVAILABLE', async () => {
      const api = await platform.newTenant();
      const refused = await api.post('/v1/agents', { name: 'isolated', tier: 'gvisor' });
      expect([refused.status, refused.body.error?.code]).toEqual([422, 'TIER_NOT_AVAILABLE']);
      const created = await api.post('/v1/agents', { name: 'plain' });
      expect([created.status, created.body.tier]).toEqual([201, null]);
      const patched = await api.request('PATCH', `/v1/agents/${created.body.id}`, { json: { tier: 'gvisor' } });
      expect([patched.status, patched.body.error?.code]).toEqual([422, 'TIER_NOT_AVAILABLE']);
    });
  });
});
