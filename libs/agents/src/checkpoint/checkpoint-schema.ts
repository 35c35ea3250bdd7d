// The PostgreSQL schema of the agent's checkpointer (LangGraph's PostgresSaver tables).
export const CHECKPOINT_SCHEMA = 'langgraph';
