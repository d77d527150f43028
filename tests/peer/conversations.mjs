// The chat-template peer test's conversations, written for it: single and
// multi-turn chats, system prompts, white space to trim, Unicode, template-
// and special-token-like text inside content, reasoning (<think>) and
// reasoning_content, tool definitions, tool calls with arguments as objects
// and as JSON strings, tool responses, roles that do not alternate, and
// content given as a list of parts. Templates that refuse a conversation
// must refuse it on both sides.

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the current weather in a city.',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string', description: 'The city, e.g. Paris' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer' },
      },
      required: ['city'],
    },
  },
};
const searchTool = {
  type: 'function',
  function: {
    name: 'search',
    description: 'Search the web. Returns snippets: "title", «quotes», 日本語.',
    parameters: { type: 'object', properties: { q: { type: 'string' }, limit: { type: 'number' } }, required: ['q'] },
  },
};

const call = (id, args) => ({ id, type: 'function', function: { name: 'get_weather', arguments: args } });

const u = (content) => ({ role: 'user', content });
const a = (content) => ({ role: 'assistant', content });
const s = (content) => ({ role: 'system', content });

export const conversations = [
  { messages: [u('Hello!')] },
  { messages: [s('You are a helpful assistant.'), u('What is 2+2?')] },
  { messages: [u('Hi'), a('Hello! How can I help?'), u('Tell me a joke.')] },
  { messages: [s('Be brief.'), u('One'), a('Two'), u('Three'), a('Four')] },
  { messages: [u('  leading and trailing white space \n\n'), a('\n answer \t')] },
  { messages: [u('Unicode: 日本語, العربية, עברית, हिन्दी, 👩‍💻🇫🇷, naïve café')] },
  { messages: [u('')] },
  { messages: [u('Template-like text: {{ x }} {% if y %} {# z #} and <|im_end|> <|eot_id|> <end_of_turn> [INST]')] },
  { messages: [u('Quotes \' " \\ and\nnew\nlines\r\nand tabs\t.')] },
  { messages: [u('Think first.'), a('<think>\nLet me plan.\n</think>\n\nThe answer is 4.'), u('Why?')] },
  { messages: [u('Think first.'), { role: 'assistant', content: 'The answer is 4.', reasoning_content: 'Two plus two.' }, u('Sure?')] },
  { messages: [u('Weather in Paris?')], tools: [weatherTool] },
  { messages: [s('Use tools wisely.'), u('Weather in Paris, and search for news?')], tools: [weatherTool, searchTool] },
  {
    messages: [
      u('Weather in Paris?'),
      { role: 'assistant', content: '', tool_calls: [call('call12345', { city: 'Paris', days: 3 })] },
      { role: 'tool', tool_call_id: 'call12345', content: '{"temp": 21.5, "sky": "clear"}' },
      a('It is 21.5 °C and clear.'),
    ],
    tools: [weatherTool],
  },
  {
    messages: [
      u('Weather in Paris and Rome?'),
      { role: 'assistant', content: null, tool_calls: [call('call12345', '{"city": "Paris"}'), call('call67890', '{"city": "Rome"}')] },
      { role: 'tool', tool_call_id: 'call12345', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call67890', content: 'rain' },
    ],
    tools: [weatherTool],
  },
  {
    messages: [
      u('Weather?'),
      { role: 'assistant', content: 'Let me check.', tool_calls: [call('abcdefghi', { city: 'Oslo', unit: 'celsius', flags: [true, false, null], ratio: 0.25 })] },
      { role: 'tool', tool_call_id: 'abcdefghi', content: '-3' },
    ],
  },
  { messages: [u('first'), u('second')] },
  { messages: [a('I start.'), u('Then me.')] },
  { messages: [{ role: 'user', content: [{ type: 'text', text: 'Parts: ' }, { type: 'text', text: 'two of them' }] }] },
  { messages: [u('No thinking please.')], extra: { enable_thinking: false } },
  { messages: [u('Thinking on.')], extra: { enable_thinking: true } },
  { messages: [s('Only a system message.')] },
  { messages: [] },
];
