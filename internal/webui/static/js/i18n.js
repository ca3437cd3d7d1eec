// The page's own strings, in English and Hebrew. The language comes from the
// browser's preferences (navigator.languages); Hebrew also turns the page
// right-to-left. Content (messages, tool results) is never translated: it
// takes its direction from its own text (dir="auto").
//
// Strings are looked up by key; {name} placeholders are filled from vars as
// text, so a translation can never inject markup.

const STRINGS = {
  en: {
    'skip': 'Skip to message box',
    'conversations': 'Conversations',
    'newChat': 'New chat',
    'pastConversations': 'Past conversations',
    'noConversations': 'No conversations yet.',
    'noMatches': 'No conversation matches.',
    'loadMore': 'Load more',
    'search': 'Search conversations',
    'searchPlaceholder': 'Search…',
    'showConversations': 'Show conversations',
    'appTitle': 'Discover Chat',
    'tools': 'Tools',
    'noModelTitle': 'No model is configured.',
    'noModelText': 'Chat is off until one is set; every tool still works in the bench.',
    'noModelHow': 'How to set a model',
    'noModelHelpDefault': 'Configure a model provider and restart the server.',
    'messages': 'Messages',
    'welcomeTitle': 'What shall we discover?',
    'welcomeText': "Ask about music, open data or the web. Toolport's agent searches with real tools and shows you every call it makes.",
    'suggestion1': 'Find melancholic love songs from the 80s',
    'suggestion2': 'Which open datasets cover air quality?',
    'suggestion3': 'What changed in the latest Go release?',
    'chatNeedsModel': 'Chatting needs a model.',
    'openBench': 'Open the tool bench',
    'sendAMessage': 'Send a message',
    'message': 'Message',
    'askAnything': 'Ask anything…',
    'configureModel': 'Configure a model to start chatting',
    'sendMessage': 'Send message',
    'stop': 'Stop',
    'hint': 'Enter to send · Shift+Enter for a new line',
    'deleteTitle': 'Delete conversation?',
    'cancel': 'Cancel',
    'delete': 'Delete',
    'tokenTitle': 'Access token needed',
    'tokenText': 'This Toolport server asks for an API token. It is kept in this tab only.',
    'tokenLabel': 'API token',
    'tokenRejected': 'That token was not accepted.',
    'continue': 'Continue',
    'renameTitle': 'Rename conversation',
    'renameLabel': 'Title',
    'save': 'Save',
    'rename': 'Rename',
    'export': 'Export',
    'exportMarkdown': 'Export as Markdown',
    'exportJSON': 'Export as JSON',
    'model': 'Model',
    'modelDefault': '{name} (default)',
    'conversationActions': 'Conversation actions',
    'regenerate': 'Regenerate',
    'regenerateLabel': 'Regenerate this answer',
    'edit': 'Edit',
    'editLabel': 'Edit this message and send it again',
    'editField': 'Edited message',
    'saveAndSend': 'Save and send',
    'editNote': 'Sending replaces this message and everything after it.',
    'newConversation': 'New conversation',
    'deleteConv': 'Delete conversation “{title}”',
    'deleteConfirm': '“{title}” and all its messages will be deleted. This cannot be undone.',
    'deleted': 'Conversation deleted.',
    'renamed': 'Conversation renamed.',
    'exported': 'Conversation exported.',
    'somethingWrong': 'Something went wrong. ',
    'gone': 'That conversation no longer exists.',
    'opened': 'Opened {title}.',
    'conversation': 'conversation',
    'sending': 'Sending…',
    'answering': 'The assistant is answering.',
    'running': 'Running {tool}…',
    'finished': '{tool} finished.',
    'failed': '{tool} failed.',
    'stopped': 'Stopped.',
    'answerFailed': 'The answer failed.',
    'answerComplete': 'Answer complete.',
    'incomplete': 'This answer is incomplete: it ended before the model finished.',
    'noAnswer': '(no answer)',
    'tokens': '{input} in · {output} out',
    'tokensTitle': 'Tokens this answer used: {input} input, {output} output',
    'convTokens': '{total} tokens',
    'convTokensTitle': 'Tokens the conversation used: {input} input, {output} output',
    'contextLabel': 'Context window',
    'contextUsed': 'Context {pct}% full ({used} of {limit} tokens)',
    'searchResults': '{n} found',
    'version': 'Toolport {version}',
    'toolCount': '{n} tools',
    // Cards.
    'statusPending': 'Pending',
    'statusExecuting': 'Running',
    'statusCompleted': 'Completed',
    'statusFailed': 'Failed',
    'statusCanceled': 'Stopped',
    'retried': 'Retried',
    'rawJSON': 'Raw JSON',
    'details': '{tool} details',
    'working': 'Working…',
    'stoppedBefore': 'Stopped before it finished',
    'callStopped': 'The call was stopped before it returned a result.',
    'waiting': 'Waiting for the result…',
    'noResults': 'No results.',
    'previous': 'Previous',
    'next': 'Next',
    'pageOf': 'Page {page} of {pages}',
    'itemsRange': '{from}–{to} of {total}',
    'tracks': 'Tracks',
    'trackCount': '{n} tracks',
    'albums': 'Albums',
    'inLibrary': 'In library',
    'indexed': 'Indexed',
    'similarity': 'Similarity score',
    'notFound': 'Not found: ',
    'datasetsOf': '{shown} of {total} datasets',
    'openOnPortal': 'Open on the portal',
    'updated': 'Updated {date}',
    'resources': 'Resources ({n})',
    'queryable': 'Queryable',
    'licence': 'Licence: {name}',
    'rowsOf': '{shown} of {total} rows',
    'linesOf': 'Showing {shown} of {total} lines',
    'retriedGaveUp': 'Retried once, then gave up.',
    'retryable': 'Retryable, not retried.',
    'notRetried': 'Not retried (not a transient error).',
    'untitled': 'Untitled',
    'untitledDataset': 'Untitled dataset',
    'fetchedPage': 'Fetched page',
    'toolFailed': 'The tool failed.',
  },
  he: {
    'skip': 'דילוג לתיבת ההודעה',
    'conversations': 'שיחות',
    'newChat': 'שיחה חדשה',
    'pastConversations': 'שיחות קודמות',
    'noConversations': 'אין עדיין שיחות.',
    'noMatches': 'אין שיחה מתאימה.',
    'loadMore': 'טעינת עוד',
    'search': 'חיפוש בשיחות',
    'searchPlaceholder': 'חיפוש…',
    'showConversations': 'הצגת השיחות',
    'appTitle': 'Discover Chat',
    'tools': 'כלים',
    'noModelTitle': 'לא הוגדר מודל.',
    'noModelText': 'הצ׳אט כבוי עד שיוגדר מודל; כל הכלים עדיין עובדים בספסל הכלים.',
    'noModelHow': 'איך מגדירים מודל',
    'noModelHelpDefault': 'יש להגדיר ספק מודל ולהפעיל מחדש את השרת.',
    'messages': 'הודעות',
    'welcomeTitle': 'מה נגלה היום?',
    'welcomeText': 'אפשר לשאול על מוזיקה, מידע פתוח או הרשת. הסוכן של Toolport מחפש בכלים אמיתיים ומראה כל קריאה שהוא מבצע.',
    'suggestion1': 'שירי אהבה מלנכוליים משנות השמונים',
    'suggestion2': 'אילו מאגרי מידע פתוחים עוסקים באיכות האוויר?',
    'suggestion3': 'מה השתנה בגרסה האחרונה של Go?',
    'chatNeedsModel': 'כדי לשוחח צריך מודל.',
    'openBench': 'פתיחת ספסל הכלים',
    'sendAMessage': 'שליחת הודעה',
    'message': 'הודעה',
    'askAnything': 'אפשר לשאול הכול…',
    'configureModel': 'יש להגדיר מודל כדי לשוחח',
    'sendMessage': 'שליחת ההודעה',
    'stop': 'עצירה',
    'hint': 'Enter לשליחה · Shift+Enter לשורה חדשה',
    'deleteTitle': 'למחוק את השיחה?',
    'cancel': 'ביטול',
    'delete': 'מחיקה',
    'tokenTitle': 'נדרש אסימון גישה',
    'tokenText': 'שרת Toolport זה מבקש אסימון API. הוא נשמר בלשונית זו בלבד.',
    'tokenLabel': 'אסימון API',
    'tokenRejected': 'האסימון לא התקבל.',
    'continue': 'המשך',
    'renameTitle': 'שינוי שם השיחה',
    'renameLabel': 'כותרת',
    'save': 'שמירה',
    'rename': 'שינוי שם',
    'export': 'ייצוא',
    'exportMarkdown': 'ייצוא כ־Markdown',
    'exportJSON': 'ייצוא כ־JSON',
    'model': 'מודל',
    'modelDefault': '{name} (ברירת מחדל)',
    'conversationActions': 'פעולות על השיחה',
    'regenerate': 'תשובה חדשה',
    'regenerateLabel': 'יצירת התשובה מחדש',
    'edit': 'עריכה',
    'editLabel': 'עריכת ההודעה ושליחתה מחדש',
    'editField': 'ההודעה הערוכה',
    'saveAndSend': 'שמירה ושליחה',
    'editNote': 'השליחה מחליפה את ההודעה הזו ואת כל מה שאחריה.',
    'newConversation': 'שיחה חדשה',
    'deleteConv': 'מחיקת השיחה „{title}”',
    'deleteConfirm': '„{title}” וכל הודעותיה יימחקו. אי אפשר לבטל זאת.',
    'deleted': 'השיחה נמחקה.',
    'renamed': 'שם השיחה שונה.',
    'exported': 'השיחה יוצאה.',
    'somethingWrong': 'משהו השתבש. ',
    'gone': 'השיחה הזו כבר לא קיימת.',
    'opened': 'נפתחה {title}.',
    'conversation': 'שיחה',
    'sending': 'שולח…',
    'answering': 'העוזר עונה.',
    'running': 'מריץ את {tool}…',
    'finished': '{tool} הסתיים.',
    'failed': '{tool} נכשל.',
    'stopped': 'נעצר.',
    'answerFailed': 'התשובה נכשלה.',
    'answerComplete': 'התשובה הושלמה.',
    'incomplete': 'התשובה חלקית: היא נקטעה לפני שהמודל סיים.',
    'noAnswer': '(אין תשובה)',
    'tokens': '{input} קלט · {output} פלט',
    'tokensTitle': 'אסימונים בתשובה זו: {input} קלט, {output} פלט',
    'convTokens': '{total} אסימונים',
    'convTokensTitle': 'אסימונים בשיחה: {input} קלט, {output} פלט',
    'contextLabel': 'חלון ההקשר',
    'contextUsed': 'ההקשר מלא ב־{pct}% ({used} מתוך {limit} אסימונים)',
    'searchResults': 'נמצאו {n}',
    'version': 'Toolport {version}',
    'toolCount': '{n} כלים',
    'statusPending': 'ממתין',
    'statusExecuting': 'רץ',
    'statusCompleted': 'הושלם',
    'statusFailed': 'נכשל',
    'statusCanceled': 'נעצר',
    'retried': 'נוסה שוב',
    'rawJSON': 'JSON גולמי',
    'details': 'פרטי {tool}',
    'working': 'עובד…',
    'stoppedBefore': 'נעצר לפני שהסתיים',
    'callStopped': 'הקריאה נעצרה לפני שהחזירה תוצאה.',
    'waiting': 'ממתין לתוצאה…',
    'noResults': 'אין תוצאות.',
    'previous': 'הקודם',
    'next': 'הבא',
    'pageOf': 'עמוד {page} מתוך {pages}',
    'itemsRange': '{from}–{to} מתוך {total}',
    'tracks': 'שירים',
    'trackCount': '{n} שירים',
    'albums': 'אלבומים',
    'inLibrary': 'בספרייה',
    'indexed': 'באינדקס',
    'similarity': 'ציון דמיון',
    'notFound': 'לא נמצאו: ',
    'datasetsOf': '{shown} מתוך {total} מאגרים',
    'openOnPortal': 'פתיחה בפורטל',
    'updated': 'עודכן {date}',
    'resources': 'משאבים ({n})',
    'queryable': 'ניתן לשאילתה',
    'licence': 'רישיון: {name}',
    'rowsOf': '{shown} מתוך {total} שורות',
    'linesOf': 'מוצגות {shown} מתוך {total} שורות',
    'retriedGaveUp': 'נוסה פעם נוספת, ואז ויתר.',
    'retryable': 'ניתן לניסיון חוזר, לא נוסה.',
    'notRetried': 'לא נוסה שוב (לא שגיאה חולפת).',
    'untitled': 'ללא שם',
    'untitledDataset': 'מאגר ללא שם',
    'fetchedPage': 'דף שנטען',
    'toolFailed': 'הכלי נכשל.',
  },
};

/** RTL lists the shipped languages written right to left. */
const RTL = new Set(['he']);

/** pickLanguage returns the first shipped language of the browser's list. */
export function pickLanguage(prefs) {
  for (const p of Array.isArray(prefs) ? prefs : []) {
    const base = String(p).toLowerCase().split('-')[0];
    if (base === 'iw') return 'he'; // the old code some browsers still send
    if (Object.hasOwn(STRINGS, base)) return base;
  }
  return 'en';
}

let lang = pickLanguage(typeof navigator === 'undefined' ? [] : (navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language]));

/** language is the page's language code. */
export function language() {
  return lang;
}

/** t returns the string for key in the page's language (English if missing). */
export function t(key, vars) {
  const table = STRINGS[lang] || STRINGS.en;
  let s = Object.hasOwn(table, key) ? table[key] : Object.hasOwn(STRINGS.en, key) ? STRINGS.en[key] : key;
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, k) => (Object.hasOwn(vars, k) ? String(vars[k]) : m));
  return s;
}

/** formatNumber formats a count for the page's language. */
export function formatNumber(n) {
  return new Intl.NumberFormat(lang).format(n);
}

/**
 * localize sets the document's language and direction and fills the static
 * markup's strings: data-i18n sets an element's text, data-i18n-<attr> (for
 * aria-label, placeholder, title) an attribute.
 */
export function localize(root = document) {
  const html = document.documentElement;
  html.lang = lang;
  html.dir = RTL.has(lang) ? 'rtl' : 'ltr';
  for (const el of root.querySelectorAll('*')) {
    for (const a of [...el.attributes]) {
      if (a.name === 'data-i18n') el.textContent = t(a.value);
      else if (a.name.startsWith('data-i18n-')) el.setAttribute(a.name.slice('data-i18n-'.length), t(a.value));
    }
  }
}
