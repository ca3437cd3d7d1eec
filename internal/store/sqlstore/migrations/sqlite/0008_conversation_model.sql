-- The model a conversation was last set to answer with (the page's model
-- picker), as the server names it ("anthropic:claude-sonnet-4-5"); '' means
-- the server's default model.
ALTER TABLE conversations ADD COLUMN model TEXT NOT NULL DEFAULT '';

-- How full the model's context window was at the end of the turn that wrote
-- an assistant message: the input and output tokens of its last model call
-- (input_tokens and output_tokens sum every call of the turn). NULL when
-- unknown, as for messages stored before this column.
ALTER TABLE messages ADD COLUMN context_tokens INTEGER;
