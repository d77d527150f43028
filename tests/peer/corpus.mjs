// The tokenizer peer test's corpus, written for it: every major script,
// white space runs, code, numbers, emoji sequences, combining marks in NFC
// and NFD, full-width forms, special-token text inside ordinary text, long
// strings and the empty string. Each entry is one string to encode.

const scripts = [
  'The quick brown fox jumps over the lazy dog.',
  "I'm sure it's fine, isn't it? YOU'LL see; we'd've known. They're here, I've won.",
  'Ça va? Élève, naïve café, garçon, Ångström, Øresund, smørbrød, ß, İstanbul, ıi.',
  'Ελληνικά: Γειά σου Κόσμε. ΆΈΉΊΌΎΏ ΐΰ ς',
  'Русский: Съешь же ещё этих мягких французских булок, да выпей чаю.',
  'Українська: Ґанок, їжак, є.  Беларуская: ў.  Српски: Ђорђе, Љубав, Његош.',
  'עברית: שלום עולם, בְּרֵאשִׁית בָּרָא',
  'العربية: مرحبا بالعالم، السَّلَامُ عَلَيْكُمْ ١٢٣٤٥٦٧٨٩٠',
  'فارسی: سلام دنیا ۱۲۳۴۵۶۷۸۹۰ — اردو: ہیلو',
  'हिन्दी: नमस्ते दुनिया, क्षत्रिय, ज़्यादा ०१२३४५६७८९',
  'বাংলা: হ্যালো বিশ্ব, কোকো া ০১২৩৪৫৬৭৮৯',
  'ਪੰਜਾਬੀ ગુજરાતી ଓଡ଼ିଆ தமிழ் தெலுங்கు ಕನ್ನಡ മലയാളം සිංහල ශ්‍රී',
  'ไทย: สวัสดีชาวโลก ภาษาไทย ๑๒๓  ລາວ: ສະບາຍດີ  ဗမာ: မင်္ဂလာပါ  ខ្មែរ: សួស្តី',
  '中文：你好，世界！我们在二〇二四年。繁體中文：臺灣。',
  '日本語：こんにちは世界。カタカナ、ひらがな、漢字。ｶﾀｶﾅ',
  '한국어: 안녕하세요 세계, 한글 자모 ㄱㄴㄷ 각',
  'ქართული: გამარჯობა, ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ\'s capital. Հայերեն: Բարեւ',
  'አማርኛ: ሰላም ልዑል ᎠᏍᎦᏯ (Cherokee) ᓀᐦᐃᔭᐍᐏᐣ (Cree) ꦗꦮ (Javanese)',
  'ᬩᬮᬶ (Balinese) ᮞᮥᮔ᮪ᮓ (Sundanese) ᨲᩲ᩠ᨶ (Tai Tham) ᱥᱟᱱᱛᱟᱲᱤ (Ol Chiki) 𞤀𞤣𞤤𞤢𞤥 (Adlam)',
  'Tiếng Việt: Xin chào thế giới, đường phố, ừ, ở, ợ.',
  'Türkçe, Polski: Zażółć gęślą jaźń. Čeština: Příliš žluťoučký kůň.',
  'Mongolian ᠮᠣᠩᠭᠣᠯ Tibetan བོད་སྐད། Thaana ދިވެހި Syriac ܠܫܢܐ',
  'Math 𝔸𝕓𝕔 𝐀𝐁𝐂 ∀x∈ℝ: x² ≥ 0, ∑ₙ aₙ ≠ ½ · ∞ — “quotes” ‘single’ «guillemets» ‹›',
];

const whitespace = [
  ' ', '  ', '   leading', 'trailing   ', '\t', '\t\t\tx', 'a\tb\tc',
  '\n', '\n\n', '\n\n\n\n', 'a\nb', 'a\n\nb', 'a \n b', 'a\r\nb', '\r\n\r\n',
  'line1\r\nline2\r\n\r\nline3', '  \n  \n  ', 'x \t \n \r\n y', '\u00a0nbsp\u00a0',
  '\u3000ideographic\u3000space', '\u2028line\u2029para', '\u000bvt\u000cff',
  '\u0085nel', 'zero\u200bwidth\u200c\u200djoiners', '\ufeffbom',
];

const code = [
  'def f(x):\n    return x ** 2  # square\n',
  'int main(int argc, char** argv) {\n\tprintf("%d\\n", argc);\n\treturn 0;\n}\n',
  'const xs = [1, 2, 3].map((x) => x * 2); // => [2, 4, 6]',
  '<html><body class="a b">Hello &amp; goodbye</body></html>',
  '{"key": "value", "n": 12345, "ok": true, "list": [null, 1.5e-10]}',
  'SELECT id, name FROM users WHERE age >= 18 ORDER BY name DESC;',
  '$ git log --oneline | head -30 && echo "done" > /tmp/x.txt 2>&1',
  'fn main() -> Result<(), Box<dyn Error>> { let v: Vec<u8> = vec![0xFF]; Ok(()) }',
  '    indented\n        more\n            most',
  'a_b__c___d snake_case camelCase PascalCase kebab-case SCREAMING_CASE',
  'https://example.com/path?q=1&r=%20#frag user@example.org',
];

const numbers = [
  '0', '7', '42', '123', '1234', '12345', '1234567890', '3.14159', '-273.15',
  '1,000,000', '1e10', '0x1F', '2024-12-01', '12:34:56', '+1 (555) 123-4567',
  '٠١٢٣٤٥٦٧٨٩', '०१२३४५६७८९', '１２３４５', '①②③', 'ⅠⅡⅢⅣ', '²³¹', '½¾⅓',
  '99999999999999999999', 'v1.2.3-rc.4',
];

const emoji = [
  '🎉', '🎉🎉🎉', '👍🏽', '👍🏻👍🏼👍🏽👍🏾👍🏿', '👩‍💻', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇫🇷🇯🇵',
  '❤️', '☺︎', '🧑🏾‍🚀 astronaut', 'emoji 🎉🚀 and text', '😀😃😄😁😆😅🤣😂',
  '🫠🫡🫢', '#️⃣ 1️⃣', '🏴󠁧󠁢󠁳󠁣󠁴󠁿',
];

// Combining marks, each word in NFC and in NFD.
const marks = ['café', 'naïve', 'Ångström', 'Phở', 'ṩ', 'ǘ', 'résumé', 'Ễ', 'ḍ̇'];
const combining = [];
for (const w of marks) combining.push(w.normalize('NFC'), w.normalize('NFD'));
combining.push(
  'e\u0301\u0323', 'e\u0323\u0301', 'a\u0308\u0304', 'x\u0300\u0301\u0302\u0303',
  '\u1E9B\u0323', '\u09BE', '\u0DCA', '\u093C', 'ক\u09BE', 'ক\u09C7\u09BE',
  '\u1100\u1161\u11A8', '\uAC00\u11A8', '\u212B', '\u2126', '\uF900', 'ﬁ ﬂ ﬀ',
  '\u0344', '\u0F73', 'Å', 'K',
);

const fullwidth = [
  'ｆｕｌｌｗｉｄｔｈ　ＡＢＣ１２３', '！？（）［］｛｝', 'ﾊﾝｶｸ ｶﾀｶﾅ', '＂＇＃＄％＆',
];

// Strings built around a family's special tokens: alone, inside words,
// doubled, with white space on either side.
export function specialTokenStrings(specials) {
  const out = [];
  for (const s of specials.slice(0, 12)) {
    out.push(s, `${s}hello`, `hello${s}`, `a ${s} b`, `a${s}${s}b`, ` ${s}`,
             `${s} `, `\n${s}\n`, `x${s.slice(0, -1)}`, `${s.slice(1)}`);
  }
  out.push(specials.slice(0, 6).join(''), specials.slice(0, 6).join(' text '));
  return out;
}

function longStrings() {
  const base = scripts.join(' ') + '\n' + code.join('\n') + emoji.join(' ');
  const out = [];
  let s = '';
  while (s.length < 6000) s += base;
  out.push(s);
  out.push('a'.repeat(5000), ' '.repeat(5000), '\n'.repeat(5000),
           'ab '.repeat(2000), '1'.repeat(5001), '🎉'.repeat(2500),
           'é'.normalize('NFD').repeat(2500), '日本'.repeat(2600));
  return out;
}

export const corpus = [
  '', ...scripts, ...whitespace, ...code, ...numbers, ...emoji, ...combining,
  ...fullwidth, ...longStrings(),
];

// Every Unicode scalar value in a contraction context, "X's X", grouped
// per chunk of `per` code points into one string of lines so that the
// sweep is ~1/per of the calls. Surrogates are skipped (not scalar values).
export function codePointSweep(per) {
  const chunks = [];
  let cur = [];
  for (let cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    cur.push(cp);
    if (cur.length === per) {
      chunks.push(cur);
      cur = [];
    }
  }
  if (cur.length) chunks.push(cur);
  return chunks;
}

export function sweepLine(cp) {
  const x = String.fromCodePoint(cp);
  return `${x}'s ${x}\n`;
}
