//! The phrase tables: for each language, the phrases that say each intent, and how they are
//! found in a text.
//!
//! A pattern is written folded (lowercase, no diacritics, see [`super::fold`]) as tokens apart:
//! a word; `word*`, any word it starts; `a|b|c`, any of these (each may end in `*`); `~`, up to
//! two words of anything (a negator among them negates the phrase: "Tuesday doesn't work"); `#`,
//! a number (digits or a number word); `@`, a day close at hand (a weekday, "tomorrow", "today",
//! "this afternoon", in the seven languages, German and Dutch compounds such as
//! "Mittwochvormittag" included); `%`, a time of day ("2", "3pm", "14h", "4:30", "noon"; not a
//! number that counts days or names a month's day); `&`, a month's name (any of the seven
//! languages; a short or ambiguous one such as "May" or "mar" only next to a day's number); a
//! leading `^`, only as a sentence of its own (`^no`: "No." but not "No es el momento"); a
//! leading `?`, only in a question (a proposal, "¿Hablamos la semana que viene?", against the
//! statement "Hablamos la semana que viene", a deferral). Phrases
//! that are alternatives of one meaning are one row, apart by ` / `. Every phrase has a weight (1
//! weak, 2 clear, 3 decisive), what a negation right before it (or `nicht`/`niet`/`pas`/`not`
//! right after it) makes of it (`negated`: another intent, or nothing), and an example: a
//! reply in which the phrase is found and which classifies as its intent. The tables test
//! themselves with their examples (this module's tests).

use super::{fold, Intent, Language};
use std::collections::HashMap;
use std::sync::OnceLock;

/// One phrase of a table.
#[derive(Debug, Clone, Copy)]
pub struct Phrase {
    /// What it says (`other`: it counts only negated, see `negated`).
    pub intent: Intent,
    /// 1 weak, 2 clear, 3 decisive.
    pub weight: f64,
    /// What the phrase means when negated (`None`: it does not count then).
    pub negated: Option<Intent>,
    /// The words, in the pattern syntax above.
    pub pattern: &'static str,
    /// A reply it is found in, which classifies as its intent.
    pub example: &'static str,
}

use Intent::{
    Interested as I, NotInterested as N, NotNow as L, Other as O, Unsubscribe as U,
    WrongPerson as W,
};

/// `(intent, weight, negated, pattern, example)`. A phrase of intent `other` counts only
/// negated, for what its negation means ("not a good time": `not_now`).
type Row = (Intent, f64, Option<Intent>, &'static str, &'static str);

const EN: &[Row] = &[
    (I, 2.0, Some(N), "interested", "I'm interested, tell me more."),
    (I, 2.0, Some(N), "interesting", "This looks interesting."),
    (I, 2.0, None, "sounds|looks good|great|interesting|perfect|fine", "Sounds good to me."),
    (I, 2.0, None, "let us talk|chat|connect|schedule|meet|set|find|do|book|hop", "Let's talk next week."),
    (I, 2.0, Some(N), "happy|glad|keen|open to ~ chat|talk|call|connect|learn|hear|meet|discuss|see|explore|look", "Happy to chat."),
    (I, 2.0, None, "send|share|forward ~ info*|details|deck|pricing|brochure|proposal|overview|case|whatever|materials|material|something", "Please send over some info."),
    (I, 2.0, None, "more info*|details", "Could you share more details?"),
    (I, 2.0, Some(U), "book|schedule|arrange|grab|set ~ call|meeting|demo|time|slot|chat", "Can we schedule a call?"),
    (I, 1.5, None, "demo|walkthrough|trial", "We'd like a demo."),
    (I, 2.0, None, "how much", "How much does it cost?"),
    (I, 1.5, None, "pricing|price|prices|cost|costs|quote", "What's the pricing?"),
    (I, 2.0, Some(U), "call|ring|phone me", "Call me tomorrow."),
    (I, 2.0, None, "give me a call|ring", "Give me a call."),
    (I, 2.0, None, "tell me more", "Tell me more."),
    (I, 2.0, None, "can|could|shall we ~ talk|chat|meet|speak|connect|hop", "Can we talk Thursday?"),
    (I, 2.0, Some(N), "would love|like to ~ learn|know|see|hear|chat|talk|discuss|try|meet|connect", "I would love to learn more."),
    (I, 2.0, None, "count me in", "Count me in!"),
    (I, 1.5, None, "does|would|will ~ work|suit", "Would Thursday work?"),
    (I, 1.5, None, "when are you ~ available|free / when is ~ good|best|convenient", "When are you available?"),
    (I, 1.5, None, "my calendar|calendly", "Here's my calendar link."),
    (I, 1.5, None, "available|free on|at|tomorrow|monday|tuesday|wednesday|thursday|friday", "I'm free on Tuesday."),
    (I, 1.5, None, "^yes|yeah|yep|sure|absolutely|definitely|ok|okay / ^yes please", "Yes"),
    (I, 1.0, None, "yes please / sure thing / absolutely|definitely", "Absolutely, let's do it."),
    (I, 1.5, None, "let me know when", "Let me know when works."),
    (I, 1.5, None, "worth ~ conversation|chat|call|look|exploring|pursuing|digging|double", "Could be worth a conversation."),
    (L, 3.0, Some(L), "not now|yet", "Not now."),
    (L, 3.0, Some(L), "not right now", "Not right now, sorry."),
    (L, 3.0, Some(L), "not at|for ~ moment|time|present|now", "Not at the moment."),
    (L, 2.5, Some(L), "reach out|back ~ again|later|in|next|after|early|around|once", "Reach out again in Q3."),
    (L, 2.5, Some(L), "circle|check|touch|come back|base", "Circle back next quarter."),
    (L, 2.0, Some(L), "follow up ~ in|next|after|later|again|early", "Follow up in January."),
    (L, 2.5, Some(L), "ping|try|contact|email|hit|ask me|us ~ later|in|next|after|early|around|nxt", "Ping me after the holidays."),
    (L, 2.5, Some(U), "ping|try|hit|ask me|us again", "Try me again."),
    (O, 0.0, None, "dont|not ~ call|ring|phone me|us between|before|after|during", "Send the deck, but don't call me before 10."),
    (U, 3.0, None, "how ~ get off ~ list|lists|this|these|it|your|mailing|emails / how ~ unsubscribe / how ~ opt out", "How do I get off this list?"),
    (L, 2.0, Some(L), "later this|next year|month|quarter|spring|summer|fall|autumn|winter / in the future", "Maybe later this year."),
    (L, 1.0, Some(L), "next year|quarter|month|week", "Next quarter."),
    (L, 2.5, Some(L), "bad|busy|hectic|wrong|tough|crazy ~ time|timing|moment|period|season|week|month", "Bad timing for us."),
    (L, 2.5, Some(L), "timing|time ~ not ~ right|great|ideal|good", "The timing is not right."),
    (L, 2.0, Some(L), "too busy|early", "Too busy right now."),
    (L, 2.5, Some(L), "after ~ holidays|holiday|summer|launch|quarter|migration|freeze|rollout|conference|vacation|break|season / after new year", "After the holidays, please."),
    (L, 2.0, Some(L), "q1|q2|q3|q4", "Try Q3."),
    (L, 2.0, Some(L), "first|second|third|fourth quarter", "Third quarter is better."),
    (L, 2.0, Some(L), "maybe later / down the road|line", "Maybe later."),
    (L, 2.5, Some(L), "revisit|reconnect|regroup", "Let's revisit in March."),
    (L, 2.5, Some(L), "in ~ few|couple|some ~ weeks|months", "In a couple of months."),
    (L, 2.5, Some(L), "in # days|weeks|months|day|week|month|wks|wk|mths|mos", "In 3 weeks."),
    (L, 2.0, Some(L), "bandwidth / capacity", "No bandwidth right now."),
    (L, 2.0, Some(L), "hold off / on hold / pause|postpone|postponed", "We're on hold until spring."),
    (L, 1.5, Some(L), MONTHS_EN_PHRASE, "Talk in March."),
    (L, 2.0, Some(L), "budget ~ next|until|in|after|frozen|freeze", "Budget frozen until next year."),
    (L, 2.0, Some(L), "not a priority ~ now|moment|this|until|yet", "Not a priority right now."),
    (N, 3.0, None, "not interested", "Not interested."),
    (N, 3.0, None, "no interest", "No interest."),
    (N, 2.5, None, "not for us|me", "Not for us."),
    (N, 2.5, None, "no|nah thank|thanks|thx|thnx|thks|ty", "No thanks."),
    (N, 2.0, None, "all set / are|am covered|sorted / good for now", "We're all set."),
    (N, 2.0, Some(I), "happy|satisfied|content|pleased with|w / happy|satisfied|content|pleased with|w ~ vendor|provider|supplier|tool|solution|system|setup|agency|partner|platform", "Happy with our current vendor."),
    (N, 2.0, None, "already ~ use|using|have|work*|signed|partner*|chose|went|got|invested|sorted|solved|covered|handled", "We already have a solution."),
    (N, 1.5, None, "current|existing ~ vendor|provider|solution|supplier|tool|partner|contract|system", "Our current provider works."),
    (N, 2.5, None, "no need", "No need."),
    // Only negated: "we need a solution hosted here" is no refusal.
    (O, 2.0, Some(N), "need", "We don't need this."),
    (N, 2.5, None, "no budget", "No budget."),
    (N, 2.5, None, "not a fit / not a good|great|right fit / not the right fit", "Not a fit."),
    (N, 2.5, None, "will|to|gonna pass", "I'll pass."),
    (N, 2.5, None, "pass on this|that|it", "We'll pass on this."),
    (N, 1.5, None, "^no|nope|nah", "Nope"),
    (N, 2.0, None, "decline|declining", "I'll have to decline."),
    (N, 2.5, None, "not looking|pursuing / not moving forward", "Not looking for this."),
    (N, 2.0, None, "not relevant|applicable", "Not relevant to us."),
    (W, 3.0, None, "not ~ right|correct|best|appropriate|relevant ~ person|contact|one|people|guy|team", "I'm not the right person."),
    (W, 3.0, None, "wrong person|contact|address|guy|department|team|email|number", "Wrong person."),
    (W, 1.5, None, "right|correct|best|better|appropriate ~ person|contact|people", "The right person is Jane."),
    (W, 3.0, None, "no longer ~ work|with|at|employed|part|there|here", "I no longer work at Acme."),
    (W, 2.0, None, "not sure|certain who ~ handles|deals|owns|looks|decides|manages|runs|buys|covers / dont know who ~ handles|deals|owns|looks|decides|manages|runs|buys|covers / no idea who ~ handles|deals|owns|looks|decides|manages|runs|buys|covers", "Not sure who handles that now."),
    (W, 3.0, None, "left ~ company|firm|organisation|organization|business|role|position|job|hotel|school|practice|agency|clinic|store|shop|restaurant|group|studio|bank|university|hospital", "I left the company."),
    (W, 2.5, None, "retired", "I retired last year."),
    (W, 2.0, None, "moved on / moved to another", "I've moved on."),
    (O, 2.5, Some(W), "handle|handles|manage|manages|responsible|own|owns|oversee|involved / in charge / decision maker", "I don't handle this."),
    (W, 2.5, None, "not ~ my|our ~ area|department|responsibility|role|decision|call|team|job|remit", "Not my area."),
    (W, 2.5, None, "you should|might|may|could|can|will|would ~ contact|reach|talk|speak|email|try|ask", "You should contact Jane."),
    (W, 2.0, None, "reach out to / talk|speak to|with / get in touch with", "Please reach out to Jane instead."),
    (W, 2.0, None, "forwarded|forwarding|passed|passing ~ to|this|your|along", "I've forwarded this to our CTO."),
    (W, 0.5, None, "colleague|instead", "Ask my colleague instead."),
    (W, 2.5, None, "that is not me / it would be our", "That's not me."),
    (W, 2.5, None, "no longer there / not with ~ anymore", "She's not with us anymore."),
    (W, 2.0, None, "left ~ ~ back|last|ago / can not help you", "I left Acme back in June."),
    (U, 3.0, None, "unsubscribe", "Unsubscribe"),
    (U, 3.0, None, "remove me|us", "Please remove me."),
    (U, 3.0, None, "take me|us off", "Take me off your list."),
    (U, 3.0, None, "remove ~ from ~ list|lists|mailing|database|emails|contacts|system", "Remove my address from your list."),
    (U, 3.0, None, "stop ~ emailing|mailing|contacting|sending|messaging|texting|calling|writing|spamming|bothering|reaching / stop ~ all|any ~ contact|emails|messages|outreach|communication|communications|calls", "Stop emailing me."),
    // Only negated: "please contact me again on 2 September" asks for the opposite.
    (O, 3.0, Some(U), "contact|email|message|text|call|write|bother ~ me|us ~ again|anymore|further", "Don't contact me again."),
    (U, 3.0, None, "no more ~ emails|messages|texts|calls|mails|contact|msgs|msg|txts|sms", "No more emails please."),
    (U, 3.0, None, "opt out / optout", "Opt out."),
    (U, 3.0, None, "leave me|us alone", "Leave me alone."),
    (U, 1.0, None, "spam", "This is spam, stop."),
    (U, 2.5, None, "stop", "Stop"),
    (U, 3.0, None, "please stop", "Please stop."),
    (O, 0.0, None, "full stop / period full stop", "No new spend, full stop."),
    (U, 2.5, None, "delete|erase ~ my|our ~ data|details|information|email|address", "Delete my data."),
    (U, 3.0, Some(U), "contact me|us", "Do not contact me."),
    (I, 2.0, None, "^keen|deal|perfect|brilliant|lovely|great|nice / ^go on then / ^love it / ^sounds good|great", "Keen!"),
    (I, 2.0, None, "send ~ times|slots|options / couple of times|slots / twisted my arm / go on then", "Send over a couple of times."),
    (I, 1.5, None, "free trial|trial / how much ~ per month|user|seat / what ~ per month|user|seat", "Is there a free trial?"),
    (L, 2.5, Some(L), "shout|holler|nudge ~ in|after|next|once|when|around / in a fortnight", "Give me a shout in a fortnight."),
    (L, 2.5, Some(L), "ask me|us again / try me|us nxt", "Ask me again on February 2nd."),
    (N, 2.5, None, "moving|switching|changing ~ off|from|away / not see us ~ moving|switching|changing", "I don't see us moving off what we have."),
    (W, 2.5, None, "got the wrong / new number", "You've got the wrong Sam."),
    (U, 3.0, None, "^remove|unsubscribe|unsub|stop / lose|delete my number|email|address", "Remove."),
    (O, 0.0, None, "thanks|thank ~ for ~ interest|info|information|proposal|offer|note|invite|invitation|message|email|reply / appreciate the ~ interest|offer", "Thanks for the info."),
    (O, 0.0, None, "where ~ get|got|find|found|obtain|obtained ~ my|our ~ email|address|details|number|contact|data / who gave you ~ my|our", "Can you tell me where you got my email address from?"),
    (L, 2.5, Some(L), "reach back out / reach out ~ on|then|when / email|text|txt|ping|call me on|then|when|nxt|next|in|after", "Please reach back out on 9/14."),
    (L, 2.5, Some(L), "not this ~ quarter|qtr|year|month|week / next qtr|quarter|year ~ maybe|then / give me ~ couple|few ~ weeks|months|days / get back to you", "Not this quarter."),
    (L, 2.5, Some(L), "talk|speak|chat|connect ~ next year|quarter|month / in the new year", "Let's talk next year."),
    (L, 2.0, Some(L), "contract ~ runs|ends|expires|renews / from|after the # / runs|expires|ends|renews through|until|in|on", "Our contract runs through January."),
    (L, 2.5, Some(L), "^january|february|march|april|may|june|july|august|september|october|november|december / come january|february|march|april|may|june|july|august|september|october|november|december", "October."),
    (N, 2.5, None, "^pass / firm no / closed lost / mark us", "Pass."),
    (U, 3.0, None, "opt ~ out / object ~ processing|marketing / erase ~ details|data|information", "Opt me out."),
    (U, 2.5, None, "stop spamming / spamming me", "Stop spamming me."),
    (I, 2.0, None, "what does|would ~ onboarding|implementation|setup|rollout|migration|pricing|price|licensing / how does ~ onboarding|implementation|setup|migration / do you integrate|support / integrate with / ^intrigued", "What does onboarding look like?"),
    (O, 0.0, None, "interested to know|hear / interested in knowing", "I'm interested to know who you are."),
    (N, 2.5, None, "stick with / do not have a problem / not something we ~ consider|need|want", "We'll stick with what we have."),
    (W, 2.5, None, "not|isnt mine to decide / stepped back|down from", "Purchasing isn't mine to decide anymore."),
    (I, 2.5, None, "@ ~ works|work|suits|suit|fine|good|great|perfect|ok|okay|free|available / @ ~ is|sounds|would|should|will|could|can|does|looks ~ fine|good|great|perfect|ok|okay|work|suit|do / % ~ works|suits / % ~ is|would|should|will ~ fine|good|great|perfect|ok|work|best / @ ~ is|would|will ~ best|ideal", "Tuesday works."),
    (I, 2.0, None, "how|what about @|% / @ at|around|after % / can do @|% / let us say @|%", "How about Friday morning?"),
    (I, 3.0, None, "call|ring|phone me|us ~ @ / call|ring|phone me|us ~ after|before|at|around|from|between % / call|ring|phone me|us ~ @ ~ after|before|at|around|from|between %", "Call me any time after 2."),
    (N, 2.5, None, "is a|an ~ no / a no from|for / hard no / decided|decide ~ against", "It's a no from us."),
    (O, 3.0, Some(U), "hear from you|us ~ again|anymore|ever / any more ~ emails|messages|texts|calls|mails|mail|sms / anymore ~ emails|messages|texts|calls", "I don't want to hear from you again."),
    (U, 3.0, None, "remove|delete|erase this ~ address|email|number", "Remove this address."),
    (L, 2.5, Some(L), "follow up|back on|around|after # / write|email|mail to me|us ~ after|in|from|next|around|again|on", "Can you follow up on 3/15?"),
    (L, 2.0, Some(L), "parental|maternity|paternity|medical|sick leave / on leave", "I'm on parental leave until May."),
    (O, 0.0, None, "so|too much|many ~ spam / lots|lot of spam / to|in|into|a|en|nello|nella|no|na|im|dans|naar|nei|al|les ~ spam|junk / spam ~ folder|filter|box|ordner|map|cartella|carpeta|pasta|dossier|mailbox|indesirables", "It landed in my spam folder."),
    (O, 2.0, Some(I), "opposed|averse", "Not opposed to a demo."),
    (I, 2.0, None, "can|could ~ do|find|grab ~ # minutes|mins|min / # minutes|mins|min ~ @", "Could we do 30 minutes Thursday?"),
    (L, 2.0, Some(L), "talk|speak|chat|connect|meet ~ on|in|after|from ~ &", "Let's speak on February 1."),
    (N, 2.5, None, "decided not|never to / no plans to ~ change|switch|move / not going|planning to ~ change|switch|move", "We decided not to go ahead."),
    (W, 2.5, None, "handed|passed ~ over|on ~ to|the / is your man|woman|person|contact now", "I handed the account over to Kwame."),
    (N, 2.5, None, "went|gone|going ~ with ~ another|different|someone / chose|picked|selected ~ another|different|someone / another|different ~ vendor|provider|supplier|solution|partner", "We went with another provider."),
    (N, 2.5, None, "handle|do|build|built|manage|solve|run ~ in house / handle|do|build|built|manage|solve|run ~ internally / in house ~ solution|tool|system|team", "We handle this in-house."),
    (N, 2.5, None, "no use for / not in the market / does not make sense / are good|fine ~ thanks|thank / will not be ~ buying|moving|proceeding|pursuing|going|purchasing", "We're not in the market for this."),
    (I, 2.5, None, "invite|invitation / up for ~ chat|call|demo|conversation|meeting", "Send me a calendar invite."),
    (L, 2.0, Some(L), "maybe|perhaps ~ next|later|in|after|around / nothing until|before / until ~ closes|wraps|finishes|completes|settles|done / swamped|slammed|snowed|overloaded", "Maybe next quarter, we're swamped."),
    (W, 2.0, None, "should go to / is for our|my", "This should go to our CFO."),
    (U, 3.0, Some(U), "contact|email|message|text|call|write ~ address|number|inbox ~ again|anymore", "Do not email this address again."),
    (N, 3.0, None, "not now or ever|later / now or in the future / now or ever", "Not now or ever."),
    (O, 2.5, Some(N), "see ~ value|point|benefit|need", "We don't see the value."),
    // A negated no is a yes: "no objection to a call", "can't hurt to talk", "not against it".
    (O, 2.0, Some(I), "objection|objections / against it|that|this|talking|chatting|meeting|a / hurt|hurts", "No objection to a quick call."),
    (I, 2.0, None, "no harm in|trying|talking|asking|chatting|looking / nothing to lose", "No harm in talking."),
    (I, 0.5, None, "no problem|probs|prob|worries", "No problem, Friday it is."),
    (N, 2.5, Some(I), "say no", "I have to say no."),
    (O, 2.0, Some(I), "turn down|refuse", "I wouldn't turn down a demo."),
    // Dissatisfaction with what they have is an opening, not a no.
    (I, 2.0, None, "unhappy|dissatisfied|frustrated|disappointed with|w / unhappy|dissatisfied|frustrated|disappointed with|w ~ vendor|provider|supplier|tool|solution|system|setup|agency|partner|platform / fed up with / looking for ~ replacement|alternative / what would switching", "We're unhappy with our current vendor."),
    (I, 1.5, None, "take|have|took a look / look into it|this / go through it", "I'll take a look at it."),
    (I, 2.5, None, "available|free|around ~ next week / next week ~ works|suits", "Are you free sometime next week?"),
    (I, 2.0, None, "@ it is / @ then", "Friday it is."),
    (W, 2.5, None, "took|taken|taking over ~ my|his|her ~ accounts|account|role|territory|position|job|clients|responsibilities|patch / successor|replacement is / try him|her", "Jorge took over my accounts, try him."),
    // Unsubscribe phrasings: a wish that this be the last message, "I never signed up", a spam report.
    (U, 3.0, None, "this|that be|were|is ~ last message|email|mail|text|one", "I'd appreciate it if this were the last message I receive."),
    (U, 2.5, None, "never ~ signed|subscribed|opted|registered|agreed|consented|asked ~ up|in|for|to / did not ~ sign|opt|subscribe ~ up|in|for", "I never signed up for this."),
    (U, 2.5, None, "report|reporting|flag|flagging|mark|marking ~ spam / report|reporting you|your", "I'm reporting this as spam."),
    (U, 3.0, None, "remove|delete|erase|lose my ~ number|address|email|details|data|info|information|contact", "Remove my number."),
    // Stop requests said politely or indirectly, and the idioms of a no and of a yes.
    (U, 3.0, None, "cease|refrain ~ all|any|from|contact*|communication*|emailing|email*|messag*|calling|texting|writing / stopped ~ emailing|contacting|messaging|texting|calling|writing ~ me|us", "Please cease all communication."),
    (U, 3.0, None, "take|get ~ my|our ~ name|email|number|address|details|info|contact off / want off / me|us off ~ list|lists|mailing|database|distribution", "Take my name off your list."),
    (O, 3.0, Some(U), "to be ~ contacted|emailed|called|texted|messaged|mailed|spammed|pestered", "I do not wish to be contacted."),
    (L, 3.0, Some(L), "not until / follow up ~ then|once|when / new|next ~ financial|fiscal|budget ~ year|cycle", "Not until the new financial year."),
    (L, 2.5, None, "wait until|till|til", "We'll wait until the audit is done."),
    (N, 2.5, None, "hard|easy pass / ^i|we pass / thanks|thank ~ anyway / thanks all the same", "Hard pass."),
    (N, 2.0, None, "survived|managed|lived ~ ~ without / done fine ~ without", "We've managed without it for years."),
    (I, 2.0, None, "worn|wore me down / ^you win / ok|fine you win", "Fine, you've worn me down."),
    (O, 0.0, None, "carpeta|bandeja|pasta|cartella|dossier|map|ordner|folder|caixa ~ ~ spam|junk|indesirables|indesejad*|indesiderat*|ongewenst*", "Por si os sirve: vuestro correo me ha llegado a la carpeta de spam."),
    (O, 0.0, None, "spoke|met|talked|chatted|emailed ~ &", "We spoke in March about something else, who is this?"),
    (N, 2.5, None, "^thanks|thank|appreciate|cheers ~ ~ but no|nope|nah / ^we are good|fine / but we are ~ good|fine|ok|set", "Thanks, but no."),
    // "Not before February" defers; a season ahead, and the week or part of a month named after
    // "email me", name when; "not a bad idea" is a yes.
    (L, 3.0, None, "not before ~ &|q1|q2|q3|q4|next|end|mid|early|late|spring|summer|fall|autumn|winter", "Not before February, sorry."),
    (L, 2.0, Some(L), "next|this spring|summer|fall|autumn|winter / in the spring|summer|fall|autumn|winter / ping|email|contact|call|text|write ~ me|us ~ week|mid|late|end|beginning|start|&", "Try again next spring."),
    (I, 2.0, None, "not a bad idea / not the worst idea", "Not a bad idea. Let's chat."),
    // Not the person, said by role or by a change of role.
    (W, 2.0, None, "am|i just|only the ~ manager|assistant|receptionist|intern|admin|office|temp|pa|secretary / the owner|boss|ceo|founder|director|md decides|handles|signs", "I'm just the office manager, the owner decides."),
    (W, 2.5, None, "changed roles|role|jobs|positions|teams / no longer ~ cover|handle|own|manage|look|responsible / no longer in charge", "I've changed roles and no longer cover this."),
    // A yes that starts with a "no": "no need for a long pitch", "I don't need convincing", "now
    // we're ready".
    (O, 0.0, None, "no need for|to ~ long|lengthy|big|full|formal|whole ~ pitch|demo|presentation|call|meeting|intro|deck|spiel", "No need for a long pitch, just send the pricing."),
    (I, 2.0, None, "do not need ~ convincing|persuading|persuasion|selling / no need to ~ convince|persuade|sell / we|i are|am ready / ready to ~ talk|chat|move|start|go|buy|sign|proceed|discuss|explore", "I don't need convincing, just send the contract."),
    (L, 2.0, Some(L), "get|got|wait ~ through|past ~ this|the|our ~ quarter|month|week|launch|migration|season|audit|crunch|renewal|rollout|holidays|busy", "Let me get through this quarter first."),
    (N, 3.0, None, "not this year|quarter|month or ~ next|after", "Not this year or next."),
    (I, 2.0, None, "not a bad time|moment / not bad timing", "Not a bad time actually, let's talk Thursday."),
    // Exasperation is a stop request: "why do you keep emailing me?", "how many times do I have to
    // ask?", "I've unsubscribed three times" (in every language).
    (U, 3.0, None, "why|you ~ keep|keeps ~ emailing|mailing|contacting|messaging|texting|calling|writing|spamming|sending / how many times ~ ~ ask|asked|tell|told|say|said / harassment|harassing / already unsubscribed / unsubscribed ~ times|twice|already|before", "Why do you keep emailing me?"),
    // A calendar entry for a date defers to it.
    (L, 2.5, Some(L), "in your|the calendar|diary for ~ &|q1|q2|q3|q4|next|early|mid|late|end|beginning", "Put it in your calendar for March and we'll talk then."),
    (U, 3.0, None, "discontinue|suspend ~ all|any|your|the|these ~ emails|mailings|messages|communications|contact|outreach", "Please discontinue all emails to this address."),
    (L, 2.0, Some(L), "pick this|it|things back up / pick this|it up again", "Let's pick this back up in spring."),
    // A quarter that names a thing ("the Q3 webinar") is not a time to write.
    (O, 0.0, None, "q1|q2|q3|q4 webinar|webinars|report|results|numbers|event|invoice|earnings|newsletter|release|update", "Will the Q3 webinar be recorded?"),
    // A no to a call is no no to the rest ("no need for a call, just email me the deck"); not
    // wishing to receive more is a stop.
    (O, 0.0, None, "no need for|of ~ call|meeting|demo|presentation|pitch|intro|chat|walkthrough / no ~ call|meeting|demo|presentation|pitch needed|necessary|required", "No need for a call, just send me the pricing."),
    (I, 2.0, None, "email|mail|text|send me ~ the|your|a|some ~ deck|pricing|prices|info|details|brochure|proposal|quote|one-pager|overview", "No call needed, just email me the deck."),
    (U, 3.0, None, "not ~ receive|receiving|get|getting ~ further|more|additional ~ emails|messages|mails|mailings|texts|calls|communications|marketing", "I'd prefer not to receive any further emails from you."),
    // A year said alone, a follow-up on the day of a month, an event that dates the deferral
    // ("after our board meeting").
    (L, 2.5, Some(L), "^next year|quarter|month|spring|summer|fall|autumn|winter / ^maybe|perhaps|probably next year|quarter|month", "Next year."),
    (L, 2.5, Some(L), "follow|reach|check|get up|out|in|back ~ on|around|after|by the # / follow|reach|check|get up|out|in|back ~ on|around|after|by the ~ of & / follow|reach|check|get up|out|in|back ~ on|around|after|by &", "Please follow up on the 2nd of February."),
    (L, 2.0, Some(L), "after ~ ~ board|budget|planning|leadership|investor|annual ~ meeting|meetings|review|approval|vote", "After our board meeting, please."),
    // The short no of a text message.
    (N, 2.5, None, "no|nah|nope ~ we are|am good|fine|set|covered|ok / are|am good|fine|set ~ thx|ty|thnx|tks|cheers", "nah we're good thx"),
    // A contract just renewed or signed elsewhere is a no, however kindly the offer is praised.
    (N, 3.0, None, "just|recently|already renewed|extended|signed / renewed ~ with|for|our|the|another|contract|agreement", "Unfortunately we renewed with Callwise for another three years."),
    (W, 3.0, None, "left ~ trust|council|charity|district|authority|institute|foundation|ministry|board|club", "Martin left the Trust in January."),
    // Someone else said the sender was interested: the words are not the replier's own yes.
    (O, 0.0, None, "you|they ~ might|may|would|were ~ be interested", "My colleague thought you might be interested in speaking at our event."),
    (O, 0.0, None, "we|i can|could ~ speak|talk to|with", "Do you have a client we can speak to? Send the deck."),
    (W, 3.0, None, "i|she|he left ~ in &", "I left Brightline in January, sorry."),
    // A question that names a time of day proposes a meeting.
    (I, 2.0, None, "?at %", "Could we do the 3rd at 2pm?"),
];

/// The English month names as one alternative (`in March`).
const MONTHS_EN_PHRASE: &str = "in|from|until|after|early|mid|late|end|beginning ~ january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec";

const DE: &[Row] = &[
    (I, 2.0, Some(N), "interess*", "Das klingt für uns interessant."),
    (I, 2.0, None, "klingt ~ gut|interessant|spannend|super|toll / hort sich ~ gut|interessant|spannend", "Klingt gut!"),
    (I, 1.5, None, "gerne|gern", "Gerne, lassen Sie uns sprechen."),
    (I, 2.0, None, "mehr ~ infos|informationen|details|erfahren|wissen", "Ich würde gern mehr erfahren."),
    (I, 1.5, None, "unterlagen|infomaterial|preisliste|broschure|prasentation", "Schicken Sie mir Unterlagen."),
    (I, 1.5, None, "termin|telefonat|anruf|gesprach|demo|videocall|austausch|call|meeting", "Gerne einen Termin."),
    (I, 2.0, Some(U), "ruf*|rufen ~ an", "Rufen Sie mich an."),
    (I, 2.0, None, "was kostet|kosten", "Was kostet das?"),
    (I, 2.0, None, "hatten|haben|hast ~ zeit|zeitfenster|termin / nicht so|ganz uninteressant / nicht uninteressant", "Hätten Sie Dienstag Zeit?"),
    (I, 1.5, None, "preis|preise|kosten", "Wie sind die Preise?"),
    (I, 2.0, None, "konnen|konnten|wollen wir ~ sprechen|telefonieren|reden|treffen|austauschen", "Können wir telefonieren?"),
    (I, 1.5, None, "wann ~ zeit|passt|konnen|ginge|geht|hatten|waere|ware", "Wann haben Sie Zeit?"),
    (I, 1.0, Some(N), "passt", "Dienstag passt."),
    (I, 1.5, None, "^ja|gerne|gern|super|prima|okay|ok / ^sehr gerne / ^ja gerne", "Ja"),
    (L, 3.0, Some(L), "nicht jetzt", "Nicht jetzt."),
    (L, 2.5, Some(L), "derzeit|momentan|aktuell|zurzeit|gerade ~ nicht|ungunstig|schlecht / im moment ~ nicht|ungunstig|schlecht", "Momentan nicht."),
    (L, 2.5, Some(L), "wieder|nochmal|erneut ~ melden|kontaktieren|zukommen|anfragen|ansprechen|versuchen|schreiben|sprechen / noch einmal ~ melden|kontaktieren / melden ~ wieder|nochmal|erneut / melden ~ ~ wieder", "Melden Sie sich im März wieder."),
    (L, 2.0, Some(L), "spater|spaeter", "Später gerne."),
    (L, 1.5, Some(L), "im|ab|nach|anfang|mitte|ende|bis ~ januar|janner|februar|marz|april|mai|juni|juli|august|september|oktober|november|dezember", "Im März."),
    (L, 1.0, Some(L), "nachste*|kommende* ~ woche|monat|jahr|quartal", "Nächstes Jahr."),
    (L, 1.0, Some(L), "quartal", "Im 3. Quartal."),
    (L, 2.5, Some(L), "nach ~ urlaub|ferien|feiertage*|sommer|weihnacht*|jahreswechsel|messe|projekt*|umstellung|einfuhrung|fusion|umzug|migration|inventur|abschluss", "Nach den Feiertagen."),
    (L, 2.5, Some(L), "zeitpunkt", "Ungünstiger Zeitpunkt."),
    (L, 2.0, Some(L), "keine zeit / viel zu tun / zu fruh / keine kapazit* / ausgelastet", "Gerade keine Zeit."),
    (L, 2.5, Some(L), "in # tagen|wochen|monaten|tag|woche|monat", "In 3 Monaten."),
    (L, 2.0, Some(L), "budget ~ nachste*|erst|ab|freigegeben", "Budget erst nächstes Jahr."),
    (L, 2.0, Some(L), "zuruckkommen|zurueckkommen|vertagen|verschieben", "Können wir das verschieben?"),
    (N, 3.0, None, "kein* interesse", "Kein Interesse."),
    (N, 3.0, None, "kein* bedarf", "Kein Bedarf."),
    (N, 2.5, None, "brauch*|benotig* ~ nicht|kein*|ned|nit", "Brauchen wir nicht."),
    (N, 2.5, None, "sind ~ versorgt|zufrieden|abgedeckt / gut aufgestellt", "Wir sind gut versorgt."),
    (N, 2.5, None, "bereits|schon ~ anbieter|losung|partner|dienstleister|tool|system|vertrag|software|gelost|geregelt|erledigt|einsatz", "Wir haben bereits einen Anbieter."),
    (N, 3.0, None, "nein danke", "Nein danke."),
    (N, 1.5, None, "^nein|ne|nee", "Nein"),
    (N, 2.0, None, "kein budget", "Kein Budget."),
    (N, 1.5, Some(I), "zufrieden", "Wir sind mit dem bisherigen Anbieter zufrieden."),
    (N, 2.5, None, "keinen wechsel|bedarf", "Wir planen keinen Wechsel."),
    (N, 2.5, None, "nicht ~ relevant|passend / nicht fur uns", "Nicht relevant für uns."),
    (N, 2.0, None, "absage|absagen", "Wir müssen absagen."),
    (W, 3.0, None, "nicht ~ zustandig|zustaendig|verantwortlich", "Ich bin nicht zuständig."),
    (O, 2.5, Some(W), "zustandig|zustaendig|verantwortlich|entscheide*", "Dafür bin ich nicht zuständig."),
    (W, 3.0, None, "falsche* ~ ansprechpartner*|person|adresse|kontakt", "Falscher Ansprechpartner."),
    (W, 2.0, Some(W), "richtige* ansprechpartner*|person|kontakt", "Der richtige Ansprechpartner ist Herr Roth."),
    (W, 1.5, None, "ansprechpartner*|ansprechperson", "Ansprechpartnerin ist Frau Maier."),
    (W, 3.0, None, "nicht mehr ~ bei|im|fur|tatig|beschaftigt / nicht mehr in der firma / nicht mehr ~ ~ unternehmen|firma|haus", "Ich bin nicht mehr bei Acme."),
    (W, 3.0, None, "arbeite* ~ nicht mehr", "Ich arbeite nicht mehr dort."),
    (W, 2.5, None, "verlassen|ausgeschieden|ruhestand|rente", "Herr Roth hat das Unternehmen verlassen."),
    (W, 2.5, None, "wenden ~ sich|dich an", "Bitte wenden Sie sich an Frau Maier."),
    (W, 2.0, None, "weitergeleitet|weiterleiten|weitergegeben", "Ich habe das weitergeleitet."),
    (W, 0.5, None, "kollege|kollegin|kollegen", "Fragen Sie meinen Kollegen."),
    (U, 3.0, None, "abmelden|abmeldung|austragen|abbestellen|abbestell*", "Bitte abmelden."),
    (U, 3.0, None, "keine ~ mail*|nachricht*|werbung|anrufe|sms|newsletter|emails ~ mehr / keine e mail* mehr", "Bitte keine E-Mails mehr."),
    (U, 3.0, None, "kontaktier*|anschreib*|schreib*|anruf*|mail*|belastig*|sende* ~ nicht mehr / kontaktier*|anschreib*|schreib*|anruf*|mail*|belastig*|sende* ~ nie|niemals wieder|mehr", "Kontaktieren Sie mich nicht mehr."),
    (U, 3.0, None, "nicht mehr ~ kontaktier*|anschreib*|schreib*|anruf*|mail*|belastig*|zusend*|anzuschreiben / nicht mehr zu kontaktieren", "Bitte nicht mehr anschreiben."),
    (U, 3.0, None, "entfern*|losch*|streich* ~ mich|liste|verteiler|daten|adresse|datenbank|nummer|telefonnummer|handynummer", "Entfernen Sie mich aus dem Verteiler."),
    (U, 3.0, None, "aus ~ verteiler|liste|datenbank|mailingliste", "Nehmen Sie mich aus der Liste."),
    (U, 2.0, None, "spam|werbemail*", "Das ist Spam."),
    (U, 3.0, None, "keine weiteren ~ nachrichten|mails|emails|anrufe|zusendungen / keine weiteren e mails", "Ich möchte keine weiteren Nachrichten."),
    (U, 2.5, None, "daten ~ loschen / losch* ~ ~ daten / dsgvo", "Löschen Sie meine Daten."),
    (I, 2.0, None, "^passt|einverstanden|abgemacht / klingt nicht verkehrt|schlecht / rufen sie mich / ruf mich", "Klingt nicht verkehrt."),
    (L, 2.5, Some(L), "erst ~ im|ab|nach|nachste*|nachsten|in|wieder|einmal", "Neue Tools planen wir erst im 2. Quartal."),
    (L, 1.5, Some(L), "melden sie sich / meld dich / elternzeit|mutterschutz|urlaub|sabbatical|auszeit", "Bitte melden Sie sich im Mai."),
    (L, 2.0, Some(L), "kapazit* / komme|komm ~ auf sie|dich ~ zu / sobald", "Ich komme auf Sie zu, sobald die Fusion durch ist."),
    (N, 2.5, None, "bestens|gut ~ bedient|aufgestellt|versorgt / lohnt sich ~ ~ nicht / weder ~ noch / sparen sie sich", "Wir sind damit bestens bedient."),
    (W, 3.0, None, "nicht meine|mein ~ baustelle|aufgabe|abteilung|bereich|thema|zustandigkeit / vertippt|verwahlt / falsche nummer / bin nicht herr|frau", "Das ist nicht meine Baustelle."),
    (U, 3.0, None, "verbitte / jede|jegliche weitere ~ kontaktaufnahme|kontakt|mail|zusendung / keine weitere kontaktaufnahme", "Ich verbitte mir jede weitere Kontaktaufnahme."),
    (L, 3.0, Some(L), "auf eis / einstellungsstopp|investitionsstopp|ausgabenstopp", "Alle Investitionen liegen auf Eis."),
    (U, 3.0, None, "horn|hoern|horns ~ ~ auf / ^es reicht", "Hörn S' endlich auf, mir zu schreiben."),
    (W, 3.0, None, "die vertretung|vertretung ~ macht|ubernimmt|hat|ist", "Frau Weber ist in Elternzeit, die Vertretung macht Herr Koch."),
    (W, 2.0, None, "weiss ~ nicht ~ wer ~ genau|zustandig|das", "Ich weiß nicht, wer genau zuständig ist."),
    (U, 3.0, None, "^abmelden|austragen|stop|stopp", "Abmelden."),
    (O, 0.0, None, "danke|dank fur ~ interesse|angebot|nachricht|info*|einladung|mail|e", "Danke für Ihr Angebot."),
    (O, 0.0, None, "woher ~ haben ~ sie|ihr|du ~ meine|unsere ~ adresse|daten|nummer|e|mailadresse|kontaktdaten", "Woher haben Sie meine Adresse?"),
    (L, 2.5, Some(L), "wieder auf mich zu / auf mich zukommen / ab dem # / ab # / vertrag ~ lauft|endet", "Kommen Sie im Mai wieder auf mich zu."),
    (L, 2.5, Some(L), "^januar|februar|marz|april|mai|juni|juli|august|september|oktober|november|dezember", "Oktober."),
    (N, 2.5, None, "kaufen ~ keine|nicht|nichts", "Eine Zeiterfassung kaufen wir keine."),
    (U, 3.0, None, "aus ihren|den listen ~ streichen / weiteren zusendungen / hort|horen ~ auf ~ schreiben|mailen|anzurufen|anrufen|nerven / nichts mehr horen / keine weiteren ~ kontaktversuche|versuche", "Hört auf mir zu schreiben!"),
    (I, 2.0, None, "wie lauft|funktioniert ~ onboarding|einfuhrung|implementierung|umstellung / ubernehmen sie / schnittstelle|integriert / ^jawohl", "Wie läuft das Onboarding ab?"),
    (O, 0.0, None, "interessant finde ich", "Interessant finde ich, dass Sie mich duzen."),
    (N, 2.5, None, "^keinesfalls / gegen ~ entschieden / gegen ~ ~ entschieden / reicht uns", "Das reicht uns völlig."),
    (L, 2.5, Some(L), "wird das nichts mehr / vor den ~ feiertagen|ferien / dieses jahr ~ ~ verplant|nicht|nichts / gerne|gern wieder", "Vor den Feiertagen wird das nichts mehr."),
    (W, 3.0, None, "nummer gehort ~ mir / gibt s hier nicht / gibts hier nicht", "Die Nummer gehört jetzt mir."),
    (U, 3.0, None, "tragen ~ ~ aus / aus allen ~ listen", "Tragen Sie meine Adresse aus allen Listen aus."),
    (I, 2.5, None, "@ ~ passt|geht|klappt|gut|prima|perfekt|ok|okay|super|ginge|kann / @ ~ ware|waere|ist|waer ~ gut|ok|prima|perfekt|super|moglich|machbar / um|ab|gegen % uhr ~ passt|geht|klappt|ware|ginge|gut|ok|prima / um % ~ passt|geht|klappt|ware|ginge / um % ~ ware|ist ~ gut|ok|prima|super|perfekt", "Donnerstag passt."),
    (I, 2.0, None, "wie ware|wars|waere ~ es ~ mit|am ~ @|% / @ um % / hatten|haben sie ~ @ ~ zeit", "Wie wäre es mit Montag, 16 Uhr?"),
    (I, 1.5, None, "um|ab|gegen % uhr|h", "Ab 15 Uhr bin ich erreichbar."),
    (I, 3.0, None, "rufen sie mich ~ @|% / ruf mich|mi ~ @|% / rufen sie mich ~ ab|um|gegen|nach % / ruf mich|mi ~ ab|um|gegen|nach % / ruf mich|mi @ ab|um|gegen|nach # / rufen sie mich @ ab|um|gegen|nach #", "Rufen Sie mich morgen ab 10 Uhr an."),
    (L, 2.5, Some(L), "rufen sie mich ~ im|ab|nach|in|anfang|ende|nachste*|kommende*|erst|wieder|nochmal / ruf mich ~ im|ab|nach|in|anfang|ende|nachste*|kommende*|erst|wieder|nochmal / wieder|nochmal|erneut an / wieder anrufen|anzurufen / gerne|gern nochmal|erneut", "Rufen Sie mich bitte im März wieder an."),
    (N, 2.5, None, "dagegen ~ entschieden|entscheiden / entschieden ~ dagegen / nicht unser|unsere ~ thema|ding|baustelle / bleiben ~ bei unser*", "Wir haben uns dagegen entschieden."),
    (U, 3.0, None, "horen sie ~ auf / hort ~ auf / aufhoren|aufzuhoren / lassen|lass|lasst ~ mich|uns ~ in ruhe / liste|verteiler|mailingliste runter / in ruhe lassen", "Hören Sie bitte auf, mir zu schreiben."),
    (O, 2.0, Some(I), "abgeneigt", "Nicht abgeneigt."),
    (I, 2.0, None, "sie mir ~ angebot|unterlagen|infos|preise|preisliste|fallstudie|fallstudien|referenz*|beispiel*|material* / mir ein angebot", "Können Sie mir ein Angebot schicken?"),
    (N, 2.5, None, "beschlossen|entschieden ~ kein*|nicht", "Wir haben beschlossen, keine neue Software einzuführen."),
    (N, 2.5, None, "anderen|andere ~ anbieter|losung|partner|dienstleister ~ entschieden / fur ~ anderen|andere ~ entschieden / machen|erledigen|losen ~ das|es|wir ~ intern|selbst / fur uns kein thema / ^leider nein|nicht / verzichten", "Wir haben uns für einen anderen Anbieter entschieden."),
    (I, 2.5, None, "einladung|kalendereinladung", "Schicken Sie mir gern eine Einladung."),
    (W, 2.5, None, "mussen sie ~ mit ~ sprechen|reden", "Da müssen Sie mit unserem Einkauf sprechen."),
    (L, 2.0, Some(L), "vorher|davor nicht", "Nach der Fusion gerne, vorher nicht."),
    (L, 1.5, Some(L), "im|ab ~ herbst|fruhjahr|fruhling|sommer|winter", "Im Herbst."),
    (I, 2.0, None, "nachste|nachsten schritt|schritte", "Was wäre der nächste Schritt?"),
    (W, 2.5, None, "entscheidet|entscheiden ~ bei uns / das entscheidet|entscheiden", "Das entscheidet bei uns die Geschäftsführung."),
    (N, 3.0, None, "weder jetzt noch / keinen mehrwert", "Wir sehen keinen Mehrwert."),
    // A negated no is a yes: "nichts dagegen", "kost ja nix", "würde nicht nein sagen".
    (I, 2.0, None, "nichts|nix dagegen / keine einwande|einwaende / kost* ~ nix|nichts / schadet|schaden ~ nicht|nie / kann nicht schaden / nicht ~ nein sagen / sage|sagen ~ nicht nein", "Ein Gespräch kostet ja nichts."),
    (I, 0.5, None, "kein problem", "Kein Problem, Freitag dann."),
    (O, 2.0, Some(I), "ablehnen|einwand", "Eine Demo würde ich nicht ablehnen."),
    (I, 2.0, None, "unzufrieden|unglucklich mit / suchen|brauchen ~ ersatz|alternative|nachfolger / was unterscheidet ~ sie|euch / worin unterscheiden", "Wir sind unzufrieden mit unserem Anbieter."),
    (I, 1.5, None, "anschauen|ansehen|anzuschauen|anzusehen / schau*|seh* ~ mir|uns ~ an / schau* ~ ~ mir|uns an", "Dann schau ich mir das an."),
    (I, 2.5, None, "nachste|nachsten|kommende ~ woche ~ zeit|termin|telefonieren|sprechen|treffen|call / zeit ~ nachste|kommende woche", "Haben Sie nächste Woche Zeit für einen Termin?"),
    (I, 2.0, None, "@ also|dann", "Freitag dann."),
    (W, 2.5, None, "nachfolger|nachfolgerin / hat ~ meine|meinen ~ ~ ubernommen", "Mein Nachfolger ist Herr Roth."),
    // Unsubscribe phrasings: "kontaktieren Sie mich künftig nicht mehr", "nie angemeldet", "als Spam melden".
    (U, 3.0, None, "kontaktier*|anschreib*|schreib*|anruf*|mail*|belastig*|sende* ~ mich|uns ~ nicht mehr|nie", "Bitte kontaktieren Sie mich künftig nicht mehr."),
    (U, 3.0, None, "war|ist|sei|bleibt ~ letzte nachricht|mail|e", "Ich hoffe, das war die letzte Mail."),
    (U, 2.5, None, "nie|niemals ~ angemeldet|eingetragen|registriert|zugestimmt|eingewilligt|abonniert", "Ich habe mich nie angemeldet."),
    (U, 2.5, None, "als spam ~ melden|markieren|melde / spam ~ melden|melde", "Ich werde das als Spam melden."),
    // Stop requests said politely or bluntly, a handover by the assistant, waiting for a change.
    (U, 3.0, None, "hor|hoer ~ auf / hor|hoer ~ auf ~ mir|mich|uns|zu|damit|mit", "Hör endlich auf mir zu schreiben!!"),
    (U, 3.0, None, "unterlass* ~ ~ kontakt*|zusend*|anruf*|mail*|nachricht*|werbung|schreib*|anschreib*|e / von weiteren ~ kontakt*|zusend*|anruf*|mail*|nachricht*|werbung|anschreib*|e", "Bitte unterlassen Sie weitere Kontaktaufnahmen."),
    (U, 3.0, None, "schick*|send*|schreib*|mail* ~ mir|uns ~ nichts|nix mehr", "Schicken Sie mir bitte nichts mehr."),
    (I, 2.0, None, "zeigen sie ~ mir|uns / zeig|zeigt ~ mir|uns", "Zeigen Sie es mir."),
    (I, 1.5, None, "# minuten|min", "Gerne, 20 Minuten."),
    (N, 2.5, None, "sind ~ ausreichend|hinreichend|bestens ~ versorgt|bedient|ausgestattet|aufgestellt|eingedeckt / sind schon|bereits ausreichend|hinreichend|bestens", "Danke, wir sind schon ausreichend versorgt."),
    (W, 2.0, None, "leite|leiten|reiche|reichen ~ an / leite|leiten|reiche|reichen|gebe|geben ~ ~ weiter / nur die|das ~ assistenz|sekretariat|empfang|zentrale", "Ich bin nur die Assistenz, ich leite das an Herrn Roth weiter."),
    (L, 2.5, None, "warten ~ bis|bevor", "Wir warten bis nach der Fusion."),
    (N, 2.5, None, "^danke|dank|vielen ~ ~ aber nein|nee|ne / nichts|nix fur uns / bleiben|bleibe ~ bei ~ unserem|unserer|unseren|aktuellen|bisherigen|bewahrten", "Danke, aber nein."),
    (L, 3.0, None, "nicht vor|bevor ~ &|q1|q2|q3|q4|quartal|ende|mitte|anfang|nachste*|kommende*|herbst|fruhjahr|sommer|winter|kw", "Nicht vor Februar."),
    (I, 2.0, None, "keine schlechte idee / nicht verkehrt|uninteressant", "Keine schlechte Idee, rufen Sie mich an."),
    (W, 2.5, None, "das macht|machen bei uns / bei mir ~ falsch|verkehrt / sind sie ~ falsch|verkehrt", "Das macht bei uns der Einkauf."),
    (I, 2.0, None, "kein schlechter|ungunstiger zeitpunkt|moment", "Kein schlechter Zeitpunkt, rufen Sie an."),
    (U, 3.0, None, "schreiben|mailen|kontaktieren|anrufen|belastigen|nerven|schicken ~ ~ standig|dauernd|andauernd|staendig / standig|dauernd|andauernd|staendig ~ mails|nachrichten|anrufe|e / wie oft ~ noch ~ sagen|schreiben|bitten", "Warum schreiben Sie mir ständig?"),
    // "Im Moment passt es nicht" defers, as does picking a topic up again on a date; a request to
    // stop the mailings is a stop; having built it oneself, or passing, is a no.
    (L, 3.0, None, "moment|augenblick|derzeit|zurzeit|aktuell|gerade|grad|momentan|jetzt passt|passen ~ ~ nicht", "Im Moment passt es leider nicht."),
    (L, 2.0, Some(L), "nochmal|nochmals|erneut|wieder aufgreifen|angehen|besprechen|aufnehmen|anschauen|ansehen / noch einmal aufgreifen|angehen|besprechen|anschauen|ansehen", "Können wir das am 15.09. nochmal aufgreifen?"),
    (U, 3.0, None, "stellen sie ~ zusendung*|mailings|werbung|kontaktaufnahme*|anschreiben|nachrichten|mails|emails / zusendung*|mailings|werbung|kontaktaufnahme*|anschreiben ~ einstellen|einzustellen", "Bitte stellen Sie die Zusendungen an diese Adresse ein."),
    (N, 2.5, None, "selbst|selber|intern ~ gebaut|entwickelt|programmiert|gelost|umgesetzt|gebastelt", "Wir haben das inzwischen selbst gebaut."),
    (N, 2.5, None, "^ich passe / ich|wir muss|mussen ~ passen / aber ich passe", "Ich passe."),
    // A year said alone.
    (L, 2.5, Some(L), "^nachste*|kommende* jahr|quartal|monat / ^vielleicht|eventuell nachste*|kommende* jahr|quartal|monat / ^im nachsten|kommenden jahr|quartal", "Nächstes Jahr."),
    // Having it already, "die Antwort ist nein"; a data-access request is not a stop request (it
    // asks what is stored); stop requests with an adverb between.
    (N, 2.5, None, "^haben wir schon|bereits / wir haben schon|bereits ~ anbieter|losung|tool|system|partner|dienstleister|agentur|software / haben wir schon|bereits ~ anbieter|losung|tool|system|partner|dienstleister|agentur|software", "Haben wir schon."),
    (N, 2.5, None, "antwort ist|lautet nein / ist es|das ein ~ nein", "Für uns ist es ein klares Nein."),
    (O, 0.0, None, "auskunft ~ ~ dsgvo / 15 dsgvo|gdpr|rgpd|avg", "Woher haben Sie meine Adresse? Ich bitte um Auskunft nach Art. 15 DSGVO."),
    (U, 3.0, None, "entfernen|loschen|streichen sie ~ ~ mich|adresse|daten|nummer|kontaktdaten|mailadresse", "Löschen Sie sofort meine Adresse."),
    (U, 3.0, Some(U), "^ich|wir will|mochte|wollen|mochten ~ mails|e-mails|emails|nachrichten|werbung|anrufe|newsletter nicht|mehr", "Ich will diese Mails nicht!"),
    (N, 3.0, None, "verlangert|verlaengert", "Wir haben für drei Jahre verlängert."),
    (N, 2.5, None, "nichts zu machen", "Da ist also nichts zu machen."),
    (W, 3.0, None, "in pension|rente|ruhestand", "Herr Pichler ist mit Ende Jänner in Pension gegangen."),
    (O, 0.0, None, "sie|ihr waren|waeren|seien|sind ~ ~ interessiert", "Er meinte, Sie wären an einer Kooperation interessiert?"),
    (O, 0.0, None, "ab # im|pro|je monat|jahr|nutzer|user|platz / ab # euro|eur|chf", "In Ihrer Mail steht ab 49 € im Monat, wir zahlen 79 €."),
    (L, 2.5, Some(L), "wieder auf den tisch / auf den tisch ~ nachstes|kommendes|im", "Das Thema kommt nächstes Jahr wieder auf den Tisch."),
    (O, 0.0, None, "wie passt das", "Wie passt das zusammen?"),
    (L, 2.5, Some(L), "nochmal|erneut anrufen|melden|schreiben|kontaktieren|versuchen / nochmal|erneut auf mich zu", "Gerne nächste Woche nochmal anrufen."),
    (I, 2.0, None, "?um %", "Passt Ihnen Donnerstag um 14 Uhr?"),
];

const FR: &[Row] = &[
    (I, 2.0, Some(N), "interess*", "Ça m'intéresse."),
    (I, 2.0, None, "volontiers / avec plaisir / pourquoi pas", "Volontiers !"),
    (I, 2.5, None, "en savoir plus", "J'aimerais en savoir plus."),
    (I, 2.0, None, "plus d ~ infos|informations|details|elements", "Pouvez-vous m'envoyer plus d'infos ?"),
    (I, 1.5, None, "documentation|brochure|plaquette|tarif*|devis|prix|grille", "Quels sont vos tarifs ?"),
    (I, 2.0, None, "combien ~ coute|coutent|cela", "Combien ça coûte ?"),
    (I, 1.5, None, "rendez vous / rdv|appel|echanger|discuter|demo|demonstration|visio|reunion|call", "On peut échanger ?"),
    (I, 2.0, Some(U), "appelez|appelle ~ moi / m appeler", "Appelez-moi demain."),
    (I, 1.5, None, "quand ~ ~ disponible|dispo|disponibles / dispo|disponible ~ jeudi|lundi|mardi|mercredi|vendredi|demain|cette|la", "Quand êtes-vous disponible ?"),
    (I, 2.0, None, "ca me va / ca marche / parfait / ca me convient / d accord / ok pour", "Ça me va."),
    (I, 1.5, None, "^oui|ok|super|top|genial|volontiers / ^bien sur / ^oui volontiers", "Oui"),
    (L, 3.0, Some(L), "pas maintenant", "Pas maintenant."),
    (L, 3.0, Some(L), "pas ~ ~ moment|instant / pas tout de suite / pas cette annee", "Pas pour le moment."),
    (L, 2.0, Some(L), "plus tard / ulterieurement", "Plus tard peut-être."),
    (L, 2.5, Some(L), "recontact*|revenez|reviens|revenir|relancez|relancer|relancerez / relance moi|nous / reprendre contact / refaire un point", "Recontactez-moi en mars."),
    (L, 2.5, Some(L), "dans # jours|semaines|mois", "Dans 2 mois."),
    (L, 1.0, Some(L), "mois|semaine|annee|an|trimestre ~ prochain|prochaine", "Le mois prochain."),
    (L, 2.0, Some(L), "en|apres|debut|fin|courant|mi|partir|du|au|le ~ janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre", "Revenez vers moi en mars."),
    (L, 1.0, Some(L), "trimestre / semestre", "Au troisième trimestre."),
    (L, 2.5, Some(L), "apres ~ vacances|fetes|ete|rentree|salon|lancement|migration", "Après les fêtes."),
    (L, 3.0, Some(L), "mauvais moment", "Mauvais moment pour nous."),
    (O, 3.0, Some(L), "bon moment", "Ce n'est pas le bon moment."),
    (L, 1.5, Some(L), "debordes|deborde|debordee|charge|occupe*|rush", "Nous sommes débordés."),
    (L, 2.0, Some(L), "budget ~ prochain|l annee prochaine|2027|2028", "Budget l'année prochaine."),
    (N, 3.0, None, "pas interess*", "Pas intéressé."),
    (N, 3.0, None, "non merci", "Non merci."),
    (N, 1.5, None, "^non", "Non"),
    (N, 3.0, None, "pas besoin / aucun besoin / pas de besoin", "Pas besoin."),
    (N, 2.0, Some(N), "besoin", "Nous n'avons pas besoin de cela."),
    (N, 2.5, None, "deja ~ prestataire|fournisseur|solution|outil|partenaire|contrat|equipes|logiciel|regle|resolu|couverts / ce qu il faut", "Nous avons déjà un prestataire."),
    (N, 1.5, None, "satisfaits|satisfait|contents|equipes", "Nous sommes satisfaits."),
    (N, 2.5, None, "pas pour nous|moi", "Pas pour nous."),
    (N, 2.0, Some(N), "correspond|convient", "Cela ne correspond pas à nos besoins."),
    (N, 2.0, None, "pas de budget", "Pas de budget."),
    (N, 2.0, None, "on|je passe / nous passons / decliner|decline", "Je passe mon tour."),
    (W, 3.0, Some(W), "bon*|bonne ~ personne|interlocuteur|contact|interlocutrice", "Je ne suis pas la bonne personne."),
    (W, 3.0, None, "mauvais* ~ personne|interlocuteur|contact|adresse", "Mauvais interlocuteur."),
    (W, 3.0, None, "ne travaille plus / ne fait plus partie / ne suis plus / n est plus / ne travaillons plus", "Je ne travaille plus chez Acme."),
    (W, 3.0, None, "quitte ~ societe|entreprise|groupe|poste|fonctions", "J'ai quitté la société."),
    (O, 2.5, Some(W), "en charge / responsable|gere|decideur / s|m occupe", "Je ne suis pas en charge de ce sujet."),
    (W, 2.0, None, "contactez|adressez / adressez vous / contacter plutot / voyez avec / voir avec mon|ma|notre|nos|mes", "Contactez plutôt Marie."),
    (W, 0.5, None, "collegue|collegues", "Voyez avec ma collègue."),
    (W, 2.0, None, "transmis|transfere|transmets|transmettre|transferer", "J'ai transmis à mon collègue."),
    (W, 2.0, None, "retraite", "Je suis à la retraite."),
    (W, 3.0, None, "trompez de numero / mauvais numero / faux numero", "Vous vous trompez de numéro."),
    (L, 2.5, Some(L), "ecrivez|ecris|reecrivez|relancez ~ moi ~ a|en|dans|apres|debut|au|vers|partir", "Écrivez-moi à partir du 5 janvier."),
    (U, 3.0, None, "desinscri*|desabonn*|desinscription", "Merci de me désinscrire."),
    (U, 3.0, None, "retirez|supprimez|enlevez|retirer|supprimer|enlever|effacer|effacez ~ ~ moi|liste|adresse|fichier|base|donnees|coordonnees|numero", "Retirez-moi de votre liste."),
    (U, 3.0, None, "ne plus ~ recevoir|contacter|ecrire|envoyer|solliciter|appeler|relancer", "Merci de ne plus me contacter."),
    (U, 3.0, None, "ne me|m ~ contactez|recontactez|ecrivez|reecrivez|appelez|rappelez|relancez|sollicitez|envoyez|contacte|recontacte|ecris|appelle ~ plus", "Ne me contactez plus."),
    (U, 3.0, None, "arretez|cessez ~ m|me|nous|ecrire|envoyer|contacter|spammer|harceler|relancer|appeler|solliciter|deranger|mailer|texter|importuner|embeter", "Arrêtez de m'écrire."),
    (U, 2.5, Some(U), "plus de ~ mails|messages|courriels|sollicitations|relances|emails|sms / plus d e mails", "Plus de mails svp."),
    (U, 2.0, None, "spam|harcelement", "C'est du spam."),
    (I, 2.0, None, "^banco|parfait|go|top|genial / jaser / pas pire / faire parvenir / m|nous envoyer", "Banco !"),
    (I, 2.0, None, "combien / essai gratuit / version|periode d ~ essai|test / libre ~ entre|jeudi|lundi|mardi|mercredi|vendredi|demain", "C'est combien par mois ?"),
    (L, 2.5, Some(L), "rappelez|rappelle ~ moi ~ la|l|en|dans|apres|semaine|lundi|mardi|mercredi|jeudi|vendredi|debut|fin / en reunion|rdv|deplacement|conge|vacances", "Rappelez-moi la semaine prochaine."),
    (L, 2.5, Some(L), "stand by / standby / en pause|attente / reviendrai|reviendrons ~ vers", "C'est en stand-by, je reviendrai vers vous."),
    (N, 2.5, None, "^nan / ^non merci / deja tout / ne va pas changer / equipe qui gagne / rester sur|avec / point barre", "Nan."),
    (O, 2.5, Some(N), "ordre du jour / d actualite", "Ce n'est pas à l'ordre du jour."),
    (W, 3.0, None, "suis pu|plus chez / ne suis plus chez", "Je suis pu chez Exemple inc."),
    (U, 2.5, None, "plus de ~ sms|appels|textos", "Plus de SMS svp."),
    (U, 3.0, None, "^stop|desabonner|desinscrire", "Stop."),
    (O, 0.0, None, "merci ~ pour|de ~ votre|ton|l|la|le ~ interet|proposition|offre|message|invitation", "Merci pour votre proposition."),
    (O, 0.0, None, "ou ~ avez|as ~ vous|tu ~ eu|obtenu|trouve|recupere ~ mon|mes|notre ~ adresse|coordonnees|numero|mail|email", "Où avez-vous eu mon adresse ?"),
    (L, 2.5, Some(L), "reprenons|reprenez ~ contact / essayez|reessayez|retentez / a partir du|des le / des ~ janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre", "Reprenons contact au T3 2027."),
    (L, 2.5, Some(L), "^janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre", "Septembre."),
    (N, 3.0, None, "inutile de ~ relancer|insister|revenir / c est non", "Inutile de relancer."),
    (I, 2.0, None, "^partant|partante|partants", "Partante !"),
    (U, 3.0, None, "m oppose / radiez|radier|rayez ~ moi", "Radiez-moi."),
    (I, 2.0, None, "comment ~ passe|fonctionne ~ deploiement|mise|integration|migration / s integre", "Comment se passe la mise en place ?"),
    (O, 0.0, None, "interesserait de savoir / interesse de savoir", "Ça m'intéresserait de savoir qui vous a donné mon numéro."),
    (N, 2.5, Some(N), "^negatif / pas l utilite / vois pas l utilite", "Je n'en vois pas l'utilité."),
    (W, 2.5, None, "vous tromper / ce numero est a moi / ai|a quitte", "J'ai quitté Exemple en juin."),
    (U, 3.0, Some(U), "veux|souhaite plus ~ recevoir", "Je ne veux plus recevoir vos courriels."),
    (I, 2.5, None, "@ ~ ok|parfait|convient|conviendrait|marche|nickel|top|impeccable|possible|dispo|disponible|libre / @ ~ me|nous ~ va|irait|convient|conviendrait|arrange|arrangerait / @ ~ c est bon|parfait|ok|top|possible / % ~ c est bon|parfait|ok|top / % ~ me|nous ~ va|irait|convient|conviendrait|arrange", "Mardi ok."),
    (I, 2.0, None, "@ ~ a|vers|des % / que diriez|dites vous de / disons @|% / ca vous ~ irait|va|convient|dit / ca te ~ va|dit|irait", "Mardi prochain à 11 h, ça vous irait ?"),
    (U, 3.0, None, "cesser|cessez|arreter|arretez ~ toute|tout|toutes|vos|les|ces ~ sollicitation*|envoi*|message*|mail*|relance*|contact*|appel*|courriel*|communication*", "Je vous prie de cesser toute sollicitation."),
    (L, 2.0, Some(L), "t1|t2|t3|t4", "Au T3."),
    (L, 2.5, Some(L), "reparle|reparlons|reparler|rediscute|rediscutons|rediscuter ~ au|en|dans|apres|a|debut|fin|l|la|le", "On en reparle au T3."),
    (N, 2.5, None, "decide de ne pas / pas l intention de ~ changer", "Nous avons décidé de ne pas donner suite."),
    (N, 2.5, None, "choisi|retenu|opte ~ autre|autres ~ fournisseur|prestataire|solution|partenaire|editeur / gerons|gere|faisons|traitons|developpe|developpons|construit|concu ~ en interne", "Nous avons choisi un autre fournisseur."),
    (O, 2.5, Some(N), "donner|donnerai|donnerons|donnons ~ suite / nous concerne", "Je ne donnerai pas suite."),
    (I, 2.5, None, "invitation", "Envoyez-moi une invitation."),
    (N, 2.5, None, "aucune ~ utilite|usage / pas d|de ~ utilite|usage / pas le budget / ^niet", "Honnêtement, on n'en aurait aucune utilité."),
    (I, 3.0, None, "rappelez|rappelle|appelez|appelle ~ moi ~ @ / ne dis|dirais|dirai pas non", "Je ne dis pas non. Rappelez-moi jeudi après 17h."),
    (W, 3.0, None, "trompez|trompe ~ de ~ personne|destinataire|contact|interlocuteur / qu il vous faut / ne sais pas qui ~ exactement|precisement|gere|s occupe", "Vous vous trompez de personne."),
    (L, 2.0, Some(L), "a la rentree / peut etre ~ plus tard / plus tard dans ~ annee|an|mois / peut etre ~ en|au|apres / peut etre ~ a la", "Peut-être à la rentrée."),
    (L, 1.5, Some(L), "au printemps / a l automne / en automne / cet ete|automne|hiver", "Au printemps."),
    (I, 2.0, None, "prochaine etape|etapes", "Quelle serait la prochaine étape ?"),
    (W, 2.5, None, "pas moi qui ~ decide|gere / pas moi qui ~ m|s occupe / c est ~ notre|mon|ma ~ directeur|directrice|patron|dg|responsable|gerant|gerante ~ qui", "Ce n'est pas moi qui décide."),
    (N, 3.0, None, "ni maintenant ni ~ jamais|demain / ni maintenant ni plus tard", "Ni maintenant ni plus tard."),
    // A negated no is a yes: "pas contre", "aucune objection", "je ne dirais pas non", "ça ne coûte rien".
    (I, 2.0, None, "pas|rien contre / aucune|aucun|pas d ~ objection|opposition|inconvenient / ne ~ refuserais|refuserai|refuserions pas", "Je ne suis pas contre un échange."),
    (I, 0.5, None, "pas de ~ probleme|souci / aucun ~ probleme|souci", "Pas de problème, vendredi alors."),
    (N, 2.5, Some(I), "dirais|dirai|dis|dire|dit ~ non", "Je vous dis non."),
    (I, 2.0, Some(I), "coute|coutera|coutent rien", "Ça ne coûte rien d'essayer."),
    (I, 2.0, None, "veux|voudrais bien / jeter un ~ oil|oeil|coup / envoyez|envoie|envoyer|transmettez ~ moi|nous", "Je veux bien jeter un œil."),
    (I, 2.0, None, "pas satisfait|satisfaits|contents|content de / mecontent*|insatisfait* / cherchons|cherche ~ remplacant|alternative / cherchons|cherche ~ autre solution", "Nous sommes mécontents de notre prestataire."),
    (I, 2.5, None, "creneau|creneaux / caler|fixer|planifier|trouver|bloquer ~ creneau|rdv|rendez|appel|moment|call|date|reunion / creneau|rdv|appel|echange|demo|call|reunion ~ ~ semaine prochaine / creneau|rdv|appel|echange|demo|call|reunion ~ ~ cette semaine", "On peut se caler un créneau la semaine prochaine ?"),
    (I, 2.0, None, "@ alors|donc", "Vendredi alors."),
    (W, 2.5, None, "successeur|remplacant|remplacante / repris|reprend ~ mes|ses ~ dossiers|clients|comptes|fonctions|poste", "Mon successeur est Marc."),
    (U, 3.0, None, "soit ~ dernier|derniere ~ message|mail|courriel|email|envoi|fois", "Je souhaite que ce soit le dernier message."),
    (U, 2.5, None, "jamais ~ inscrit|inscrite|abonne|abonnee|consenti|accepte|demande", "Je ne me suis jamais inscrit."),
    (U, 2.5, None, "signaler|signale|signalerai|signalerais ~ spam|indesirable / signaler ~ ~ spam|indesirable", "Je vais signaler vos mails comme spam."),
    // Stop requests said politely or bluntly, waiting for a change, a no in an idiom.
    (U, 3.0, None, "cesser|arreter ~ me|m|nous ~ contacter|ecrire|envoyer|solliciter|appeler|relancer|harceler|deranger|spammer / arretez|cessez svp|stp|merci|tout|maintenant / ^arretez|cessez", "Veuillez cesser de me contacter."),
    (U, 3.0, None, "laissez|laisse ~ tranquille*|paix", "Laissez-moi tranquille."),
    (O, 3.0, Some(U), "etre ~ contacte|contactee|contactes|sollicite*|relance|relancee|derange|derangee|demarche*", "Je ne souhaite plus être contacté."),
    (U, 2.5, None, "jamais ~ donne|communique|transmis|fourni ~ adresse|numero|coordonnees|mail|email|accord|consentement|autorisation", "Je n'ai jamais donné mon adresse."),
    (N, 2.5, Some(N), "servirait|sert|servira|serviraient|servir ~ rien", "Ça ne nous servirait à rien."),
    (N, 2.0, None, "survecu|vecu|fonctionne ~ ~ sans", "On a toujours fonctionné sans."),
    (L, 2.5, None, "attendre ~ que|jusqu", "Je préfère attendre que le budget soit voté."),
    (N, 2.5, None, "^merci ~ ~ mais non / reste|restons|restera|resterons|restez ~ avec|sur|chez", "Merci, mais non."),
    (L, 3.0, None, "pas avant", "Pas avant février."),
    (I, 2.0, None, "pas idiot|bete / pas une mauvaise idee / on peut|pourrait en ~ parler|discuter|reparler", "Ce n'est pas idiot, on peut en parler jeudi ?"),
    (O, 3.0, Some(W), "moi qu il faut|faudrait", "Ce n'est pas moi qu'il faut contacter."),
    (L, 2.0, Some(L), "prematur* / trop tot", "C'est prématuré pour nous, peut-être l'an prochain."),
    (N, 3.0, None, "ni cette|ce ~ annee|mois|trimestre|an ni", "Ni cette année ni l'an prochain."),
    (L, 2.5, Some(L), "moment|instant|actuellement ~ ~ pas d actualite|prioritaire / pas d actualite|prioritaire pour le|l ~ moment|instant", "Pour le moment ce n'est pas d'actualité chez nous."),
    (I, 2.0, None, "pas un mauvais moment", "Ce n'est pas un mauvais moment, appelez-moi."),
    (U, 3.0, None, "continuez|continuer ~ m|me|nous ~ ecrire|envoyer|contacter|appeler|relancer|solliciter|spammer / combien de fois ~ dire|demander|repeter", "Pourquoi continuez-vous à m'écrire ?"),
    // No need to take me off the list (it is not a request), however it is said.
    (O, 0.0, None, "inutile|besoin|peine de ~ retirer|desinscrire|supprimer|enlever|rayer|radier ~ ~ liste|listes|fichier|fichiers|base|contacts", "Inutile de me retirer de votre liste."),
    // A year said alone.
    (L, 2.5, Some(L), "^l annee|an prochaine|prochain / ^le trimestre|mois prochain / ^peut etre l annee|an prochaine|prochain", "L'année prochaine."),
    // A no to a meeting that asks for the prices is a yes.
    (O, 0.0, None, "non|nan pas besoin de|d ~ rendez*|rdv|appel|call|reunion|demo|presentation|rencontre|echange / pas besoin de|d ~ rendez*|rdv|appel|call|reunion|demo|presentation|rencontre|echange", "Non, pas besoin de rendez-vous, envoyez-moi juste vos tarifs."),
    // Having it already.
    (N, 2.5, None, "on|nous a|avons deja ~ ca|un|une|fournisseur|outil|solution|prestataire|partenaire|logiciel", "On a déjà ça."),
    // "Non, c'est bon" declines.
    (N, 2.5, None, "non|nan c est bon|ok|gentil / ca ira merci", "Non c'est bon merci."),
    (N, 3.0, None, "venons|vient|viens de|d renouveler|signer / renouvele|renouvelle ~ avec|pour|notre|le|contrat", "Nous venons de renouveler avec notre prestataire."),
    (O, 0.0, None, "vous etiez|seriez ~ interesse|interesses|interessee|interessees", "Il paraît que vous étiez intéressés par notre salle ?"),
    (W, 3.0, None, "j ai quitte", "J'ai quitté la Croix-Blanche fin mars."),
    (W, 2.5, None, "ne peux plus vous aider", "Je ne peux plus vous aider, je suis partie."),
    (I, 2.5, None, "nous|me transmettre|envoyer|faire ~ ~ documentation|doc|brochure|tarifs|tarif|devis|offre|presentation|plaquette", "Merci de nous transmettre une documentation technique."),
    (O, 0.0, None, "je reviens vers vous / je vous reviens", "Envoyez-moi une doc svp, je regarde ça et je reviens vers vous."),
    (I, 2.0, None, "?a %", "Jeudi à 15h ?"),
    (I, 2.5, None, "?c est possible / ?est ce possible / ?ca vous va / ?ca vous convient", "Le 3 décembre à 14 h, c'est possible de votre côté ?"),
];

const ES: &[Row] = &[
    (I, 2.0, Some(N), "interes*", "Me interesa."),
    (I, 2.0, None, "suena ~ bien|genial|interesante|perfecto", "Suena bien."),
    (I, 2.0, Some(N), "gustaria|encantaria ~ saber|conocer|hablar|ver|recibir|mas|agendar", "Me gustaría saber más."),
    (I, 2.0, None, "mas ~ informacion|info|detalles", "Envíame más información."),
    (I, 2.0, None, "enviame|envieme|mandame|mandeme|envien|pasame|compartan|comparte", "Mándame los detalles."),
    (I, 2.0, None, "cuanto ~ cuesta|cuestan|vale|sale|cobran", "¿Cuánto cuesta?"),
    (I, 1.5, None, "precio|precios|cotizacion|tarifa|tarifas", "¿Qué precios manejan?"),
    (I, 1.5, Some(N), "presupuesto para", "Mándeme un presupuesto para diez usuarios."),
    (I, 1.5, None, "llamada|reunion|demo|videollamada|cita|agendar|agendemos", "Agendemos una llamada."),
    (I, 2.0, Some(U), "llamame|llameme|llamenme|marcame", "Llámame mañana."),
    (I, 2.0, None, "hablemos|conversemos|platiquemos", "Hablemos el jueves."),
    (I, 2.0, None, "podemos|podriamos ~ platicar|hablar|conversar|vernos|reunirnos|agendar / me|te|le|nos late", "¿Podemos hablar el jueves?"),
    (I, 1.5, None, "claro|vale|perfecto|dale|genial / por supuesto / de acuerdo / con gusto", "Claro, con gusto."),
    (I, 1.5, None, "^si|claro|dale|vale|ok / ^si claro / ^claro que si", "Sí"),
    (L, 3.0, Some(L), "ahora no / de momento no / por ahora no / por el momento no / en este momento no / todavia no / aun no", "Ahora no."),
    (L, 2.5, Some(L), "no ~ por ahora / no ~ de momento / no ~ en este momento / no ~ por el momento", "No por ahora, gracias."),
    (L, 2.5, Some(L), "mas adelante / mas tarde / en otro momento / a futuro", "Más adelante."),
    (L, 2.5, Some(L), "dentro de # dias|semanas|meses|dia|semana|mes / en # dias|semanas|meses", "Dentro de 2 meses."),
    (L, 1.0, Some(L), "proximo|proxima ~ semana|mes|ano|trimestre|semestre", "El próximo trimestre."),
    (L, 2.0, Some(L), "en|partir|para|principios|finales|mediados|despues ~ enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre / # de &", "A partir de marzo."),
    (L, 1.0, Some(L), "trimestre / semestre", "En el tercer trimestre."),
    (L, 2.5, Some(L), "vuelve|vuelva|volvamos|retomar|retomemos|retomamos|recontacta|recontacte|escribeme|escribame|contactame|contacteme|buscame|escribenos|contactanos ~ en|mas|despues|dentro|a|el|la|para|entonces", "Escríbeme en marzo."),
    (O, 3.0, Some(L), "buen momento", "No es buen momento."),
    (L, 2.5, Some(L), "despues de ~ vacaciones|fiestas|verano|navidad|cierre|pascua / despues de semana santa", "Después de las vacaciones."),
    (L, 1.5, Some(L), "ocupado*|ocupada*|liados|liado|saturados|saturado|tope", "Estamos muy ocupados."),
    (N, 3.0, None, "no gracias", "No, gracias."),
    (N, 1.5, None, "^no", "No"),
    (O, 2.0, Some(N), "necesit*", "No lo necesitamos."),
    (N, 2.5, None, "ya ~ tenemos|contamos|trabajamos|usamos|utilizamos|resuelto|resolvimos|solucionado|cubiertos|servidos / bien servidos|cubiertos", "Ya tenemos proveedor."),
    (N, 1.5, None, "contentos|satisfechos|conformes", "Estamos contentos con lo que tenemos."),
    (N, 2.5, None, "no es para nosotros / no aplica / no nos aplica / no encaja", "No es para nosotros."),
    (O, 1.5, Some(N), "presupuesto", "No tenemos presupuesto."),
    (W, 2.5, Some(W), "persona ~ correcta|indicada|adecuada|responsable", "No soy la persona indicada."),
    (W, 3.0, None, "ya no ~ trabaj*|esta|estoy|pertenezco|laboro|labora / ya no formo|forma parte", "Ya no trabajo en Acme."),
    (I, 2.5, None, "en que ~ diferenci* / periodo de prueba", "¿En qué os diferenciáis de la competencia?"),
    (W, 2.5, None, "eso lo ~ ve|lleva|gestiona|maneja|revisa / no se|sabria ~ quien ~ exactamente|lleva|ve|gestiona|decide", "Eso lo ve finanzas."),
    (W, 2.5, None, "deje|dejo|sali|salio ~ empresa|compania", "Dejé la empresa."),
    (O, 2.5, Some(W), "encargad*|responsable / me|se ocupo|ocupa / llevo|lleva ese tema", "No soy el encargado."),
    (W, 2.0, None, "contacta|contacte|escribale|escribele|dirigete|dirijase|comunicate|comuniquese ~ a|con / hable|habla con", "Hable con mi compañera."),
    (W, 0.5, None, "companero|companera|colega", "Pregúntale a mi colega."),
    (W, 2.0, None, "reenvie|reenviado|reenviare|reenvio|reenviar / he pasado|pase ~ tu|su correo", "Le reenvié tu correo."),
    (W, 2.0, None, "jubilado|jubilada|jubile", "Me jubilé."),
    (W, 3.0, None, "numero equivocado / se equivoco de numero / equivocado de numero", "Número equivocado."),
    (U, 3.0, None, "dar|darme|denme|dame|den|da|darnos|denos|deme|dadme|dadnos ~ de baja / desuscrib*|desinscrib* / cancelar ~ suscripcion / ^baja", "Denme de baja."),
    (U, 3.0, None, "no mas ~ mensajes|correos|emails|llamadas|mails|msj", "No más mensajes."),
    (U, 3.0, None, "eliminar|eliminen|eliminame|borrar|borren|borrame|quitar|quiten|quitame|saquen|sacar|sacame|quitenme|saquenme|eliminenme|borrenme ~ ~ lista|base|correo|datos|contacto|listado|numero|telefono|email|mail / quitenme|saquenme|eliminenme|borrenme|quitame|sacame|eliminame|borrame", "Quítenme de su lista."),
    (U, 3.0, None, "no ~ me|nos ~ escriban|escribas|contacten|contactes|llamen|llames|envien|envies|manden|mandes|molesten|molestes", "No me escriban más."),
    (U, 3.0, None, "dejen|deja|deje de ~ escribir*|enviar*|contactar*|llamar*|mandar*|molestar*", "Dejen de escribirme."),
    (U, 2.5, Some(U), "recibir ~ mas|correos|mensajes|emails|mails", "No quiero recibir más correos."),
    (U, 3.0, None, "ni un|una ~ correo|mensaje|email|mail|llamada ~ mas", "Ni un correo más, por favor."),
    (N, 2.5, None, "no procede / ya ~ esta|estan ~ cubierto|cubierta|cubiertos|resuelto|resuelta", "El servicio ya está cubierto."),
    (U, 3.0, None, "derecho|derechos ~ supresion|oposicion|cancelacion / supresion de ~ ~ datos", "Ejerzo mis derechos de supresión y de oposición."),
    (N, 3.0, None, "no hace falta que ~ borr*|quit*|elimin*|sac*|des|den ~ lista|listas|base|baja|listado / no es necesario que ~ borr*|quit*|elimin*|sac*|des|den ~ lista|listas|base|baja|listado", "No hace falta que me borres de la lista, pero no nos interesa."),
    (O, 3.0, Some(U), "me|nos vuelvas|vuelva|vuelvan|volvais|volvierais a ~ escribir*|contactar*|llamar*|mandar*|molestar*|enviar*", "No quiero que me volváis a escribir."),
    (O, 3.0, Some(U), "quiero|queremos|deseo|deseamos ~ recibir", "No quiero recibir nada de ustedes."),
    (U, 2.0, None, "spam", "Esto es spam."),
    (U, 2.5, None, "^basta", "Basta."),
    (I, 2.0, None, "^orale|dale|sale|perfecto|listo|hecho|claro|vale|genial / ^de acuerdo", "Órale."),
    (I, 1.5, None, "cuanto / prueba gratis|gratuita", "¿Cuánto por mes?"),
    (L, 2.5, Some(L), "ahorita no / te busco|buscamos|escribo|aviso ~ yo|cuando / cuando pase", "Es un ahorita no."),
    (N, 2.5, None, "^paso / no gracias / nos apanamos|arreglamos / no es algo que / no ~ estamos buscando|buscamos", "Paso."),
    (O, 2.5, Some(N), "convencio|convence|convencido|convencidos / tiene sentido", "No nos convenció."),
    (W, 3.0, None, "equivoco|equivocado|equivocada|equivocaste|equivocaron|equivocan|equivocas ~ de persona|numero / no soy la|el ~ sra|sr|senora|senor / quien lleva el tema / lo decide", "Se equivocó de persona."),
    (U, 3.0, None, "quiteme|quitenme|sacame|saqueme ~ ~ lista|listas|base|correo / dejen|deja|deje d ~ mandar*|enviar*|escribir*", "Quíteme de sus listas."),
    (U, 3.0, None, "^baja|stop|alto", "Baja."),
    (O, 0.0, None, "gracias|agradezco|agradecemos ~ interes|informacion|propuesta|invitacion|mensaje|correo", "Te agradezco el interés."),
    (O, 0.0, None, "de donde|donde ~ saco|sacaron|sacaste|obtuvo|obtuvieron|consiguio|consiguieron ~ mi|mis|nuestro ~ correo|direccion|datos|numero|email", "¿De dónde sacaron mi correo?"),
    (L, 2.5, Some(L), "hablamos|vemos|platicamos ~ la|el ~ sem|semana|mes|ano|proxima|proximo / a partir del|de # / mes|ano|semana|trimestre que viene", "Hablamos la semana que viene."),
    (L, 2.5, Some(L), "^enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre", "Enero."),
    (U, 3.0, None, "derechos arco / cancelacion de ~ datos / se abstengan / desapunt*|borradme|quitadme|eliminadme|sacadme / elimin*|borr*|quit*|sac* ~ ~ base|lista|listas|contactos", "Desapuntadme."),
    (U, 3.0, None, "no me ~ escrib*|contact*|llam*|mand*|envi*|molest* ~ mas", "Que no me escribieras más."),
    (I, 2.0, None, "como es ~ proceso|implementacion|integracion / se integra / lo charlamos|platicamos", "¿Cómo es el proceso de implementación?"),
    (O, 0.0, None, "interesa saber", "Me interesa saber de dónde sacaron mi correo."),
    (O, 2.5, Some(N), "hace falta", "No nos hace falta."),
    (N, 2.5, None, "^nel / continuar con ~ proveedor|nuestro", "Hemos decidido continuar con nuestro proveedor actual."),
    (I, 2.5, None, "@ ~ me|nos|le ~ va|viene|queda|sirve|cuadra / @ ~ esta|estaria ~ bien|perfecto / @ ~ va|viene|queda ~ bien|perfecto / a las % ~ me|nos ~ va|viene|queda|sirve|cuadra / a las % ~ esta|va ~ bien|perfecto / @ ~ si|perfecto|ok|vale|genial|libre|disponible / @ ~ tarde|manana|noche ~ si|perfecto|ok|vale", "El martes me va bien."),
    (I, 2.0, None, "que tal|parece ~ @|% / que tal|parece ~ a las % / podria|puede|podemos ~ ser|quedar ~ @|% / quedamos ~ @|% / quedamos ~ a las %", "¿Qué tal el martes a las 11?"),
    (U, 3.0, None, "no me|nos ~ vuelvas|vuelva|vuelvan|volvais|volvierais a ~ escribir*|contactar*|llamar*|mandar*|molestar*|enviar*", "No me vuelvas a escribir."),
    (N, 2.5, None, "decidido|decidimos no / no pensamos|planeamos ~ cambiar", "Hemos decidido no seguir adelante."),
    (N, 2.5, None, "elegimos|escogimos|optamos|decidimos ~ por ~ otro|otra / elegimos|escogimos ~ otro|otra / lo hacemos|gestionamos|resolvemos ~ internamente|nosotros / desarrollamos|desarrollado|construimos|hicimos ~ internamente|nosotros / desarrollamos|desarrollado|construimos|hicimos ~ en casa", "Elegimos a otro proveedor."),
    (O, 2.5, Some(N), "seguir|seguiremos|avanzar ~ adelante", "No vamos a seguir adelante."),
    (I, 2.5, None, "invitacion", "Mándame una invitación."),
    (W, 2.5, None, "lo ve|lleva|maneja ~ el area|departamento|equipo", "Eso lo ve el área de compras."),
    (L, 2.0, Some(L), "quizas|quiza ~ en|para|despues|mas / tal vez ~ en|para|despues|mas", "Quizás en otoño."),
    (L, 1.5, Some(L), "en|para ~ otono|primavera|verano|invierno", "En otoño."),
    (I, 2.0, None, "siguiente|proximo paso|pasos", "¿Cuál sería el siguiente paso?"),
    (W, 2.5, None, "no soy ~ quien|yo ~ decide|decido / decide ~ mi|el|nuestro|nuestra ~ jefe|director|directora|gerente|dueno|duena|socio", "No soy quien decide eso."),
    (U, 3.0, None, "no vuelvas|vuelva|vuelvan|volvais a ~ escribir*|contactar*|llamar*|mandar*|molestar*|enviar*", "No vuelvan a contactarme."),
    (N, 3.0, None, "ni ahora ni ~ nunca|despues|luego / ni ahora ni mas adelante / ni en el futuro", "Ni ahora ni nunca."),
    (O, 2.5, Some(N), "vemos ~ valor|sentido|utilidad", "No le vemos valor."),
    // A negated no is a yes: "no tengo inconveniente", "no le diría que no", "no pierdo nada", "sin problema".
    (O, 2.0, Some(I), "inconveniente|inconvenientes|objecion|objeciones|contra / rechazaria|rechazariamos", "No tengo inconveniente en hablar."),
    (I, 0.5, None, "sin|ningun problema / no hay problema", "Sin problema, el viernes entonces."),
    (N, 2.5, Some(I), "diria|digo|diriamos ~ que no", "Le digo que no."),
    (I, 2.0, Some(I), "pierdo|perdemos|pierde|cuesta ~ nada / no esta de mas", "No pierdo nada por verlo."),
    (I, 1.5, None, "echar|echo|echamos ~ vistazo|ojo", "Le echo un vistazo."),
    (I, 2.0, None, "descontentos|descontento|insatisfechos|insatisfecho / no estamos contentos|satisfechos / buscamos|buscando ~ alternativa|reemplazo|sustituto", "Estamos descontentos con nuestro proveedor."),
    (I, 2.5, None, "?hablamos|hablemos|platicamos|vemos|llamamos|charlamos ~ semana que viene / ?hablamos|hablemos|platicamos|vemos|llamamos|charlamos ~ proxima semana / ?hablamos|hablemos|platicamos|vemos|llamamos|charlamos ~ semana proxima", "¿Hablamos la semana que viene?"),
    (I, 2.0, None, "@ entonces", "El viernes entonces."),
    (W, 2.5, None, "sucesor|sucesora / se hizo|hace cargo ~ mis|mi / se ha hecho cargo ~ mis|mi", "Mi sucesora es Ana."),
    (U, 3.0, None, "sea ~ ultimo|ultima ~ mensaje|correo|email|vez", "Que este sea el último correo que recibo."),
    (U, 2.5, None, "nunca ~ suscribi|suscrito|registre|registrado|autorice|autorizado|pedi|solicite", "Nunca me suscribí a nada."),
    (U, 2.5, None, "reportar|reporto|reportare|denunciar|denunciare|marcar|marcare ~ spam / como spam", "Voy a marcar esto como spam."),
    // Stop requests said politely or bluntly, waiting for a change.
    (U, 3.0, None, "dejen*|deja*|deje* ~ en paz / dejar en paz", "Déjenme en paz."),
    (O, 3.0, Some(U), "ser ~ contactad*|molestad*", "No deseo ser contactado."),
    (L, 2.5, None, "esperar ~ a que|hasta / esperemos ~ hasta|a", "Prefiero esperar a que cerremos el año."),
    (N, 2.5, None, "^gracias|agradezco|agradecemos ~ ~ pero no / ^prefiero|preferimos no / prefiero|preferimos que no / quedamos|quedaremos|seguimos|seguiremos|continuamos|continuaremos ~ con ~ nuestro|nuestra|nuestros|actual / quedamos|quedaremos|seguimos|seguiremos|continuamos|continuaremos con lo que", "Gracias, pero no."),
    (O, 2.5, Some(N), "lo que ~ buscamos|necesitamos|buscando", "No es lo que buscamos."),
    (L, 3.0, None, "no antes de|del ~ &|proximo|proxima|fin|final|finales|mediados|principios|verano|otono|invierno|primavera", "No antes de febrero."),
    (I, 2.0, None, "no es|seria mala idea / no estaria|estaria mal", "No es mala idea, hablemos el jueves."),
    (O, 3.0, Some(U), "quiero|deseo|necesito ~ mas ~ mensajes|correos|emails|llamadas|mails|msj|sms|whatsapps", "No quiero más mensajes."),
    (W, 2.5, None, "no es ~ mi|de ~ area|departamento|responsabilidad|competencia|tema / te|le ~ paso con", "No es mi área."),
    (O, 2.5, Some(W), "lo llevo|manejo|veo yo", "Eso no lo llevo yo."),
    (N, 3.0, None, "ni este|esta ~ ano|mes|trimestre ni", "Ni este año ni el próximo."),
    (I, 2.0, None, "no es ~ mal momento", "No es mal momento, llámame."),
    (U, 3.0, None, "siguen|sigues|sigue ~ escribiendo|enviando|mandando|llamando|contactando|molestando / cuantas veces ~ pedir|decir|repetir", "¿Por qué me siguen escribiendo?"),
    // A quarter or a month to look at it in, with no budget before then; passing; a request to
    // suspend the mailings.
    (L, 2.5, Some(L), "vemos|hablamos|retomamos|miramos en|a ~ trimestre|&|ano|mes|semana|verano|otono|invierno|primavera", "Lo vemos en el cuarto trimestre."),
    (L, 2.5, None, "antes no ~ hay|tenemos|tendremos ~ presupuesto / antes no ~ hay|tenemos|tendremos ~ presupuesto para / hasta entonces no ~ hay|tenemos|tendremos ~ presupuesto", "Antes no hay presupuesto para herramientas nuevas."),
    (N, 2.5, None, "^gracias|muchas ~ ~ pero paso|pasamos", "Gracias pero paso."),
    (U, 3.0, None, "cesen|cese|cesar|suspendan|suspenda|suspender|detengan|detenga|detener ~ envio*|correo*|mensaje*|comunicacion*|email*|mail*", "Suspendan los envíos a esta dirección."),
    (N, 2.5, None, "lo desarrollamos|construimos|hicimos ~ nosotros|internamente / desarrollo|herramienta|solucion propio|propia|interno|interna", "Lo desarrollamos nosotros hace años."),
    // A year said alone.
    (L, 2.5, Some(L), "^el proximo ano|trimestre|mes / ^quizas|quiza el proximo ano|trimestre / ^tal vez el proximo ano|trimestre", "El próximo año."),
    // A no to a call that asks for the prices is a yes.
    (O, 0.0, None, "no no hace falta ~ llamada|reunion|demo|presentacion|videollamada / no hace falta ~ llamada|reunion|demo|presentacion|videollamada / no no necesito|necesitamos ~ llamada|reunion|demo|presentacion|videollamada", "No, no hace falta una llamada, mándame los precios."),
    // A stop request with an adverb between ("borre inmediatamente mi dirección").
    (U, 3.0, None, "borre|borren|borra|elimine|eliminen|elimina|quite|quiten|quita|saque|saquen ~ mi|mis|nuestro|nuestros direccion|correo|email|datos|numero|contacto", "Borre inmediatamente mi dirección de su lista."),
    (N, 3.0, None, "acabamos|acabo de ~ firmar|renovar|contratar / renovamos|firmamos ~ con|por|el|contrato", "Acabamos de firmar con otro proveedor por dos años."),
    (W, 3.0, None, "se retiro|jubilo / me|se fui|fue ~ empresa|compania|clinica|firma|agencia|tienda|escuela|hospital|puesto|cargo|area / no es conmigo / conmigo no es", "Me fui de la empresa en agosto."),
    (O, 0.0, None, "estaban|estarian|estan|estais ~ interesados|interesadas|interesado|interesada", "Mi socio dice que ustedes estaban interesados en comprar el local."),
    (I, 1.5, None, "?a las %", "¿Nos vemos el 22 a las 9?"),
    (I, 3.0, None, "podemos|podriamos|podria|puede reunirnos|vernos|hablar|conversar|quedar el|este #", "¿Podemos reunirnos el 22 de octubre?"),
    (L, 2.5, Some(L), "esta semana ~ imposible|complicad*|dificil", "Esta semana imposible. Llámame la próxima semana."),
];

const PT: &[Row] = &[
    (I, 2.0, Some(N), "interess*", "Tenho interesse."),
    (I, 2.0, None, "parece ~ bom|otimo|interessante|legal", "Parece ótimo."),
    (I, 2.0, Some(N), "gostaria|adoraria ~ saber|conhecer|falar|ver|receber|mais|agendar|marcar", "Gostaria de saber mais."),
    (I, 2.0, None, "mais ~ informacoes|informacao|info|detalhes", "Pode enviar mais informações?"),
    (I, 2.0, None, "me envie|mande|manda|envia|passa / enviem|mandem", "Me manda a proposta."),
    (I, 2.0, None, "quanto ~ custa|custam|sai|fica|cobram", "Quanto custa?"),
    (I, 1.5, None, "preco|precos|valores|proposta", "Qual o preço?"),
    (I, 1.5, None, "reuniao|ligacao|chamada|demo|demonstracao|conversa|call|agendar|marcar|disponibilidade", "Vamos marcar uma reunião."),
    (I, 2.0, Some(U), "me liga|ligue / ligue me / ligar", "Me liga amanhã."),
    (I, 2.0, None, "vamos ~ conversar|falar|marcar|agendar", "Vamos conversar."),
    (I, 1.5, None, "sim|claro|bora|combinado|perfeito|otimo / com certeza / pode ser", "Sim, claro."),
    (L, 3.0, Some(L), "agora nao / no momento nao / por enquanto nao / neste momento nao / ainda nao / de momento nao", "Agora não."),
    (L, 2.5, Some(L), "nao ~ no momento / nao ~ por enquanto / nao ~ neste momento / nao ~ agora", "Não no momento."),
    (L, 2.5, Some(L), "mais para|pra frente / mais adiante|tarde / noutra altura / outro momento / futuramente", "Mais para frente."),
    (L, 2.5, Some(L), "daqui a # dias|semanas|meses|dia|semana|mes / daqui # dias|semanas|meses / dentro de # dias|semanas|meses|dia|semana|mes / em # dias|semanas|meses", "Daqui a 3 meses."),
    (L, 1.0, Some(L), "proximo|proxima ~ semana|mes|ano|trimestre|semestre", "No próximo trimestre."),
    (L, 2.0, Some(L), "ano|mes|semana que|q vem", "Ano que vem."),
    (N, 3.0, None, "nao ~ daremos|dar ~ seguimento|continuidade / ja ~ encontra|esta ~ assegurado|assegurada|coberto|resolvido", "Não daremos seguimento à vossa proposta."),
    (I, 2.5, None, "qto|qnto|qt ~ custa|custo|sai|fica / manda|mande|envia|envie ~ o|a ~ link|convite", "qto custa?"),
    (L, 3.0, Some(L), "me|nos ~ procura|procure|procurem|chama|liga ~ ~ ano|mes|semana que|q vem", "Me procura ano que vem."),
    (L, 2.0, Some(L), "em|partir|inicio|final|meados|depois ~ janeiro|fevereiro|marco|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro / # de &", "Em março."),
    (L, 1.0, Some(L), "trimestre / semestre", "No terceiro trimestre."),
    (L, 2.5, Some(L), "volte|volta|voltar|retome|retomar|retomamos|procure|contate|escreva|contacte|chama|chame|contactar ~ em|depois|mais|daqui|no|a|na|comigo|semana|mes|ano|proxima|proximo / entre em contato ~ em|depois|mais|daqui|no|a|na / fale comigo ~ em|depois|mais|daqui|no|a|na", "Me procure em março."),
    (O, 3.0, Some(L), "bom momento / boa altura", "Não é um bom momento."),
    (L, 2.5, Some(L), "apos|depois ~ ferias|festas|verao|carnaval|natal|fechamento", "Depois das férias."),
    (L, 3.0, Some(L), "de ferias|licenca ~ ate", "Tô de férias até dia 10."),
    (L, 1.5, Some(L), "correria|corrido|ocupado*|ocupada*|atarefad*", "Estamos numa correria."),
    (N, 3.0, None, "nao obrigad*", "Não, obrigado."),
    (N, 1.5, None, "^nao", "Não"),
    (O, 2.0, Some(N), "preciso|precisamos|precisa|precisam|precisaria", "Não precisamos."),
    (N, 2.5, None, "ja ~ temos|usamos|trabalhamos|possuimos|contamos|utilizamos|resolvemos|resolvido|resolvida", "Já temos fornecedor."),
    (N, 1.5, None, "satisfeitos|contentes|atendidos", "Estamos satisfeitos."),
    (N, 2.5, None, "nao e para nos / nao se aplica / nao faz sentido", "Não é para nós."),
    (N, 1.5, None, "sem orcamento|verba", "Sem orçamento."),
    (N, 2.5, None, "^dispenso / dispensamos", "Dispenso."),
    (O, 2.5, Some(N), "faz|faca sentido", "Não é algo que faça sentido para nós."),
    (W, 2.5, Some(W), "pessoa ~ certa|correta|indicada|responsavel|adequada", "Não sou a pessoa certa."),
    (W, 3.0, None, "nao trabalho|trabalha|estou|esta mais / ja nao trabalho|trabalha|estou|esta / nao faco|faz mais parte", "Não trabalho mais na Acme."),
    (W, 3.0, None, "sai|saiu|deixei|deixou ~ empresa|companhia", "Saí da empresa."),
    (W, 3.0, None, "deixou|saiu ~ a|da ~ cooperativa|escola|loja|clinica|agencia|firma|organizacao|casa|equipe|equipa", "O Rui deixou a cooperativa em março."),
    (W, 2.0, None, "nao sei ~ quem ~ exatamente|exactamente|cuida|decide|trata", "Não sei quem cuida disso."),
    (N, 3.0, None, "parar|pare|parem ~ mandar|enviar|escrever ~ sobre esse|este|isso|isto|desse|deste", "Pode parar de me mandar coisa sobre esse produto."),
    (O, 2.5, Some(W), "responsavel|cuido|cuida|encarregad*|participo|decido / trato|trata desse|disso", "Não sou responsável por isso."),
    (W, 2.0, None, "fale|falar com / contate|contacte ~ o|a|com / procure o|a / dirija se", "Fale com a Ana."),
    (W, 0.5, None, "colega", "Meu colega cuida disso."),
    (W, 2.0, None, "encaminh*|reencaminh*|repassei|repassar|repasso", "Encaminhei para o financeiro."),
    (W, 2.0, None, "aposentad*|reformad*", "Estou aposentado."),
    (W, 3.0, None, "numero errado / errou o numero / engano", "Acho que errou o número."),
    (U, 3.0, None, "descadastr*|desinscrev* / cancelar ~ inscricao|subscricao", "Quero me descadastrar."),
    (U, 3.0, None, "remova|remove|removem|remover|removam|retire|retirar|tire|tira|tirar|tirem|exclua|excluir|apague|apagar ~ ~ lista|cadastro|base|email|contato|dados|me|numero", "Me tirem da lista."),
    (U, 3.0, None, "nao ~ me|nos ~ envie|enviem|mande|mandem|contate|contatem|contactem|ligue|liguem|escreva|escrevam|incomode|incomodem / nao ~ me|nos ~ enviar|mandar|contatar|contactar|ligar|escrever|incomodar ~ mais", "Não me envie mais mensagens."),
    (U, 3.0, None, "parem|pare|para|deixem|deixe|deixa|deixar|parar de ~ de|enviar|mandar|ligar|escrever|contatar|contactar", "Parem de me mandar e-mails."),
    (U, 2.5, Some(U), "receber ~ mais|emails|mensagens|mails / receber ~ e mails", "Não quero receber mais e-mails."),
    (U, 2.0, None, "spam", "Isto é spam."),
    (O, 3.0, Some(U), "ser ~ contatad*|contactad*|incomodad*|procurad*", "Não quero mais ser contatado."),
    (U, 2.5, None, "exclusao|eliminacao|apagamento|remocao ~ ~ dados", "Solicito a exclusão dos meus dados."),
    (U, 2.5, None, "^chega", "Chega."),
    (I, 2.0, None, "^fechado|bora|combinado|show|beleza|perfeito|claro|sim / ^pode ser / qto|quanto custa / teste gratis|gratuito", "Fechado."),
    (N, 2.5, None, "^negativo / ^dispenso / vou passar / ja tem / mexer em time|equipe", "Negativo."),
    (O, 2.0, Some(N), "verba|orcamento", "Não temos verba."),
    (W, 3.0, Some(W), "troquei de ~ chip|numero / nao e|eh mais do|da / quem manda|decide|cuida|trata", "Esse número não é mais do Rodrigo."),
    (U, 3.0, None, "^sair|parar|pare|remover|descadastrar / tirarem|tirar ~ do|da ~ mailing|lista / receber nada", "Sair."),
    (O, 0.0, None, "obrigado|obrigada|agradeco|agradecemos|valeu ~ pelo|pela|o|a ~ interesse|proposta|contato|informacao|convite|mensagem|email", "Agradecemos a proposta."),
    (O, 0.0, None, "onde ~ conseguiu|conseguiram|obteve|obtiveram|arranjou|pegou|pegaram ~ meu|meus ~ email|endereco|contato|contacto|dados|numero", "Onde conseguiram o meu email?"),
    (L, 2.5, Some(L), "nao|n da / a gente fala|falamos|conversamos|conversa / a gente se fala|ve / para o ano / a partir de # / nessa|nesta altura", "Agora não dá."),
    (L, 2.5, Some(L), "^janeiro|fevereiro|marco|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro", "Outubro."),
    (U, 3.0, None, "nao volte a ~ contactar|contatar|escrever|ligar / parem de me procurar / retire|remova|removam|retirem|apaguem|apague ~ ~ endereco|listas|contacto|contato|telefone|telemovel|celular", "Não volte a contactar-me."),
    (I, 2.0, None, "como funciona ~ implementacao|implantacao|integracao / quanto tempo leva / topo conversar / ^topo", "Como funciona a implementação?"),
    (O, 0.0, None, "interesse em saber", "Tenho interesse em saber como conseguiram o meu número."),
    (O, 2.5, Some(N), "necessidade|prioridade", "Não temos necessidade."),
    (N, 2.5, None, "^nops|negativo / decidimos nao seguir / ja usa|usamos", "Decidimos não seguir com a proposta."),
    (L, 2.0, Some(L), "fala|fale|falamos ~ cmg|comigo", "Fala comigo na próxima semana."),
    (U, 3.0, None, "retir* ~ ~ base|lista|listas|dados", "Peço que me retirem da vossa base de dados."),
    (I, 2.5, None, "@ ~ pode ser / @ ~ serve|funciona|combinado|perfeito|otimo|ok|beleza|fechado|livre|disponivel / @ ~ fica|esta|ta ~ bom|otimo|perfeito|bem|otima|boa / @ ~ da|consigo|posso / as % ~ pode ser / as % ~ serve|funciona|fica|esta|ta|perfeito|otimo", "Terça às 10 pode ser."),
    (I, 2.0, None, "que tal ~ @|% / que tal as % / pode ser ~ @ / pode ser as %", "Que tal terça-feira às 16h?"),
    (U, 3.0, None, "nao ~ entrem|entre|entrar ~ contato|contacto", "Peço que não entrem mais em contato comigo."),
    (N, 2.5, None, "nao vamos|pretendemos ~ mudar|trocar", "Não pretendemos trocar de sistema."),
    (I, 2.0, None, "combin*|marc*|agend* ~ data|dia|horario|hora", "Combinem uma data para a demonstração."),
    (N, 2.5, None, "escolhemos|optamos|fechamos ~ por|com ~ outro|outra / escolhemos|optamos ~ outro|outra / fazemos|resolvemos|cuidamos ~ isso ~ internamente / desenvolvemos|desenvolvido|criamos|fizemos ~ ~ internamente / desenvolvemos|desenvolvido|criamos|fizemos ~ em casa / recusar|recuso", "Escolhemos outro fornecedor."),
    (O, 2.5, Some(N), "seguir ~ em frente / seguir ~ adiante", "Não vamos seguir em frente."),
    (I, 2.5, None, "convite", "Pode mandar um convite."),
    (I, 2.5, None, "periodo de ~ teste|testes|avaliacao|experiencia", "Vocês têm período de teste?"),
    (W, 2.5, None, "isso|isto e com ~ o|a|os|as ~ setor|departamento|equipe|area|pessoal|ti|rh|financeiro|compras|juridico", "Isso é com o setor de compras."),
    (L, 2.0, Some(L), "talvez ~ no|na|em|depois|mais / segundo|proximo semestre", "Talvez no segundo semestre."),
    (L, 1.5, Some(L), "no|na ~ outono|primavera|verao|inverno", "No outono."),
    (I, 2.0, None, "proximo passo|passos", "Qual seria o próximo passo?"),
    (U, 3.0, None, "nunca mais ~ me|nos ~ envie|envie|mande|mandem|contate|contatem|contactem|ligue|liguem|escreva|escrevam|incomode|incomodem", "Nunca mais me mandem e-mail."),
    (N, 3.0, None, "nem agora nem ~ depois|nunca / nem no futuro", "Nem agora nem depois."),
    (O, 2.5, Some(N), "vemos ~ valor|sentido|utilidade", "Não vemos valor nisso."),
    // A negated no is a yes: "sem problema", "não custa nada", "não diria que não", "nada contra".
    (I, 0.5, None, "sem problema|problemas / nao tem problema", "Sem problema, sexta então."),
    (I, 2.0, Some(I), "custa ~ nada / nada contra", "Não custa nada conversar."),
    (O, 2.0, Some(I), "objecao|objecoes|oposicao|contra / recusaria|recusariamos", "Não tenho objeção a uma conversa."),
    (N, 2.5, Some(I), "diria|digo|dizer ~ que nao", "Eu digo que não."),
    // "Not yet" about having a tool is a need, not a deferral.
    (O, 0.0, None, "ainda nao ~ temos|tem|tenho|possuimos|usamos ~ nenhum|nenhuma|ferramenta|solucao|sistema|fornecedor|nada|algo|isso|disso / ainda nao ~ achamos|encontramos ~ substituto|alternativa|solucao|nada|ninguem", "Ainda não temos nenhuma ferramenta para isso."),
    (I, 2.0, None, "me|nos conta|conte|fala|fale ~ mais / procurando|buscando ~ substituto|alternativa|solucao / insatisfeitos|insatisfeito|descontentes", "Me conta mais?"),
    (I, 2.0, None, "integra|integram|conecta ~ com", "Integra com o Pipedrive?"),
    (I, 2.0, None, "fechamos|marcamos|combinamos ~ @ / @ entao", "Fechamos sexta então."),
    (I, 1.5, None, "dar uma olhada / olhada", "Vou dar uma olhada."),
    (I, 2.5, None, "?podemos|podiamos|vamos ~ conversar|falar|marcar|agendar ~ semana que vem / ?podemos|podiamos|vamos ~ conversar|falar|marcar|agendar ~ proxima semana", "Podemos conversar semana que vem?"),
    (N, 2.5, None, "bem servidos|servido|atendidos / ja ~ estamos ~ servidos / nao se ~ enquadra|encaixa|adequa|aplica|adapta|encaixam|adequam", "Já estamos bem servidos."),
    (W, 3.0, None, "pessoa|contato errado|errada / sucessor|sucessora / assumiu ~ minhas|meus ~ contas|clientes|funcoes", "Pessoa errada, sou do RH."),
    (U, 3.0, None, "seja ~ ultima|ultimo ~ mensagem|email|mail|vez", "Que esta seja a última mensagem."),
    (U, 2.5, None, "nunca ~ cadastrei|inscrevi|assinei|autorizei|pedi|solicitei", "Nunca me cadastrei em nada."),
    (U, 2.5, None, "denunciar|denuncio|marcar|marco|reportar ~ spam / como spam", "Vou marcar como spam."),
    // Stop requests said politely or bluntly, an accountant who is not the buyer, being swamped,
    // waiting for a change.
    (U, 3.0, None, "deix* ~ em paz", "Deixem-me em paz."),
    (U, 2.5, None, "nunca ~ autorizacao|consentimento|permissao|autorizei|consenti", "Nunca vos dei autorização."),
    (W, 2.0, None, "sou da|do ~ contabilidade|financeiro|rh|ti|juridico|marketing|logistica|producao|administrativo|suporte|secretaria|recepcao", "Eu sou da contabilidade."),
    (L, 2.0, Some(L), "sem tempo / afogado|afogada|atolado|atolada|enrolado|enrolada|sobrecarregad*|lotad*", "Tô sem tempo essa semana."),
    (L, 2.5, None, "esperar ~ ate|que|passar|terminar / aguardar ~ ate|que", "Vamos esperar até o fim do trimestre."),
    // A no in the forms Portuguese replies use: "não rola", "valeu, mas não", "estamos bem
    // assim", staying with what they have, a company too small, out of the budget.
    (N, 2.5, None, "^obrigad*|agradeco|valeu|grato|grata ~ ~ mas nao / ^prefiro|preferimos nao / nao rola / mas passo / ^passo|declino / declinar|declinamos", "Valeu, mas não."),
    (N, 2.0, None, "nao vai ~ dar|rolar / nao curti|gostei / pequen* demais", "Não vai dar, obrigado."),
    (N, 2.5, None, "estamos|ficamos|estou|to|tamo ~ bem ~ com|assim / com o que ~ temos|usamos / continuar|manter|ficar|seguir|mantemos|ficamos|seguimos|continuamos|manteremos|ficaremos ~ com|o ~ nossa|nosso|atual|atuais / manter|mantemos|manteremos o que ~ temos|usamos", "Estamos bem com o que temos."),
    (N, 2.5, None, "nao compensa / nao vale a pena / nao combina ~ com / nao faz parte ~ planos|prioridades / fora do|da|dos ~ nosso|nossa|nossos ~ orcamento|realidade|escopo|foco|perfil|planos / nao estamos|estou ~ procurando|buscando|precisando / nao e pra|para ~ mim|nos|gente|nossa / ^to|tou|estou fora", "Não compensa pra nós."),
    (O, 2.5, Some(N), "avancar|prosseguir|andamento|continuidade", "Não vamos avançar."),
    (L, 3.0, None, "nao antes de|do|da ~ &|proximo|proxima|fim|final|meados|inicio|verao|outono|inverno|primavera", "Não antes de fevereiro."),
    (I, 2.0, None, "nao e|seria ma ideia / nao seria mau|mal / podemos|podiamos ~ falar|conversar", "Não é má ideia. Podemos falar quinta?"),
    (O, 3.0, Some(U), "quero|desejo|preciso ~ mais ~ mensagens|emails|e|mails|ligacoes|sms|msg|msgs|contato|contacto", "Não quero mais mensagens."),
    (W, 2.5, None, "nao e ~ minha|meu ~ area|alcada|responsabilidade|competencia|setor|departamento", "Esse assunto não é da minha área."),
    (N, 3.0, None, "nem este|esse|neste|nesse ~ ano|mes|trimestre nem", "Nem este ano nem o próximo."),
    (I, 2.0, None, "nao e ~ mau momento|hora / pode|podem|podes ~ mandar|enviar|passar", "Não prometo nada, mas pode mandar a apresentação."),
    (U, 3.0, None, "continuam|continuas ~ mandando|enviando|escrevendo|ligando|mandar|enviar|escrever|ligar / quantas vezes ~ pedir|dizer|falar|repetir", "Por que vocês continuam me mandando email?"),
    // "Não voltem a contactar-me", passing, a request to suspend the mailings.
    (U, 3.0, None, "nao voltem|voltar|volte a ~ contactar*|contatar*|escrever*|ligar*|enviar*|mandar*|incomodar* / nao me|nos ~ voltem|volte|voltes|voltar a ~ contactar*|contatar*|escrever*|ligar*|enviar*|mandar*|incomodar*", "Peço que não voltem a contactar-me."),
    (N, 2.5, None, "^obrigad*|agradeco|valeu|grato|grata ~ ~ mas vamos|vou passar / ^vamos|vou passar", "Agradeço, mas vamos passar."),
    (U, 3.0, None, "cessem|suspendam|suspenda|interrompam ~ envio*|email*|mensage*|comunicac*|contato*|contacto*", "Suspendam os envios para este endereço."),
    // "Ainda não a recebi" is something not arrived yet, not a deferral.
    (O, 0.0, None, "ainda nao ~ recebi|recebemos|recebeu|chegou|chegaram|paguei|pagamos|vi|li", "Ainda não a recebi."),
    // A year said alone; calling on the date named is waiting for it.
    (L, 2.5, Some(L), "^no proximo ano / ^proximo ano|trimestre|mes / ^talvez no|o proximo ano", "No próximo ano."),
    (L, 2.5, Some(L), "ligar|liga|ligue|contactar|contatar|escrever|falar ~ nessa|nesta|naquela|nesse|neste|naquele data|altura|dia|semana|mes", "Volto dia 15/09, pode me ligar nessa data."),
    // A no to a meeting that asks for the prices is a yes.
    (O, 0.0, None, "nao nao precisa|precisamos ~ reuniao|ligacao|chamada|call|demo|apresentacao / nao precisa|precisamos ~ reuniao|ligacao|chamada|call|demo|apresentacao", "Não, não precisa de reunião, me manda os preços."),
    // The short "não, obg", having a supplier already.
    (N, 2.5, None, "nao|n ~ obg|obgd|obgda|brigado|brigada|vlw|valeu", "Não obg."),
    (N, 2.0, None, "ja temos|tenho|usamos ~ fornecedor|ferramenta|solucao|sistema|parceiro|plataforma|software|agencia", "Já temos fornecedor."),
    (N, 3.0, None, "acabamos|acabei de ~ renovar|assinar|fechar|contratar / renovamos ~ com|por|o|contrato", "Acabamos de renovar o contrato por mais dois anos."),
    (L, 3.0, Some(L), "para ja nao / por agora nao / ^para ja", "Para já não, obrigado. Talvez mais para o fim do ano."),
    (L, 2.5, Some(L), "me procura|procure|procurem ~ em|no|na|depois|partir|daqui", "Me procura em março."),
    (O, 0.0, None, "voces|vcs estariam|estavam|estao ~ interessados|interessadas", "O meu colega disse que vocês estariam interessados em patrocinar o torneio."),
    (I, 2.0, None, "?as %", "Amanhã às 15h?"),
    (I, 2.0, None, "?pode ser ~ dia|@|# / ?podemos ~ dia|@", "Pode ser no dia 2 de dezembro às 15h?"),
];

const NL: &[Row] = &[
    (I, 2.0, Some(N), "interesse|geinteresseerd|interessant", "Wij hebben interesse."),
    (I, 2.0, None, "klinkt ~ goed|interessant|leuk|prima", "Klinkt goed!"),
    (I, 1.5, None, "graag", "Graag een afspraak."),
    (I, 2.0, None, "meer ~ informatie|info|details|weten", "Ik wil graag meer weten."),
    (I, 2.0, None, "stuur|stuurt|mail ~ informatie|info|details|offerte|prijzen|brochure|presentatie", "Stuur mij wat informatie."),
    (I, 2.0, None, "wat kost|kosten", "Wat kost het?"),
    (I, 1.5, None, "prijs|prijzen|offerte|tarieven", "Wat zijn de prijzen?"),
    (I, 1.5, None, "afspraak|belletje|gesprek|demo|call|kennismaking|afspreken|inplannen", "Laten we een afspraak inplannen."),
    (I, 2.0, Some(U), "bel me|mij / bellen", "Bel me morgen."),
    (I, 1.5, None, "^ja|prima|top|akkoord|zeker|graag / ^ja graag / ^ja hoor", "Ja"),
    (I, 1.0, None, "prima|akkoord|zeker", "Prima, doe maar."),
    (L, 3.0, Some(L), "nu niet", "Nu niet."),
    (L, 2.5, Some(L), "moment|momenteel|voorlopig|even ~ niet / nog niet / nog ~ even|eventjes|echt|helemaal niet", "Op dit moment niet."),
    (L, 2.0, Some(L), "later / in de toekomst", "Later misschien."),
    (L, 2.5, Some(L), "over # dagen|weken|maanden|dag|week|maand", "Over 2 maanden."),
    (L, 1.0, Some(L), "volgende|volgend|komend|komende|vlgnde|vlg ~ week|maand|jaar|kwartaal", "Volgend jaar."),
    (L, 2.5, Some(L), "na ~ zomer|vakantie|feestdagen|kerst|zomervakantie|jaarwisseling|beurs|bouwvak", "Na de zomer."),
    (L, 2.0, Some(L), "in|vanaf|na|begin|eind|half ~ januari|februari|maart|april|mei|juni|juli|augustus|september|oktober|november|december", "In maart."),
    (L, 1.0, Some(L), "kwartaal", "In het derde kwartaal."),
    (L, 2.5, Some(L), "opnieuw|nogmaals|terug|weer ~ contact|benaderen|mailen|melden|bellen|proberen", "Neem in maart opnieuw contact op."),
    (L, 2.5, Some(L), "slecht* moment", "Slecht moment."),
    (O, 2.5, Some(L), "goede|goed|juiste moment", "Geen goed moment."),
    (L, 1.5, Some(L), "druk|drukte|vol", "Het is nu erg druk."),
    (L, 2.5, Some(L), "nog eens ~ mailen|bellen|contact|benaderen", "Kun je me in maart nog eens mailen?"),
    (N, 3.0, None, "geen interesse", "Geen interesse."),
    (N, 3.0, None, "nee ~ bedankt|dank*|thx|thanks", "Nee, bedankt."),
    (N, 1.5, None, "^nee|neen", "Nee"),
    (N, 3.0, None, "geen behoefte", "Geen behoefte."),
    (N, 2.0, Some(N), "behoefte|nodig", "Wij hebben het niet nodig."),
    (N, 2.5, None, "al ~ leverancier|oplossing|partner|systeem|pakket|contract|geregeld|opgelost|voorzien|iets", "We hebben al een leverancier."),
    (N, 1.5, None, "tevreden*", "We zijn tevreden."),
    (N, 2.5, None, "niet|niets voor ons", "Niet voor ons."),
    (N, 2.0, None, "geen budget", "Geen budget."),
    (N, 3.0, None, "geen nood", "We hebben geen nood aan."),
    (N, 2.5, None, "doen we niks|niets mee / niks|niets voor ons", "Daar doen we niks mee."),
    (W, 3.0, None, "verkeerde ~ persoon|contactpersoon|adres|afdeling", "Verkeerde persoon."),
    (W, 2.5, Some(W), "juiste ~ persoon|contactpersoon|aanspreekpunt", "Ik ben niet de juiste persoon."),
    (W, 3.0, None, "niet meer ~ werkzaam|bij|actief / niet meer in dienst", "Ik ben niet meer werkzaam bij Acme."),
    (W, 3.0, None, "werk|werkt|werken ~ niet meer / werk|werkt hier niet meer", "Ik werk hier niet meer."),
    (W, 3.0, None, "uit dienst", "Hij is uit dienst."),
    (W, 2.5, None, "verlaten|vertrokken / met pensioen", "Ik heb het bedrijf verlaten."),
    (O, 2.5, Some(W), "verantwoordelijk|beslis* / ga|gaat over", "Ik ben niet verantwoordelijk."),
    (W, 3.0, None, "ga|gaat ~ niet over / valt niet onder", "Daar ga ik niet over."),
    (W, 2.0, None, "contact ~ opnemen|op met|met", "Neem contact op met Jan."),
    (W, 0.5, None, "collega", "Vraag het mijn collega."),
    (W, 2.0, None, "doorgestuurd|doorsturen|doorgezet", "Ik heb het doorgestuurd."),
    (W, 3.0, None, "verkeerd|verkeerde nummer", "Verkeerd nummer."),
    (U, 3.0, None, "afmelden|uitschrijven|afmeld*|uitschrijv*", "Graag afmelden."),
    (U, 3.0, None, "verwijder|verwijderen|haal|schrap|schrappen ~ mij|me|lijst|bestand|adres|gegevens|mailinglijst|nummer|telefoonnummer", "Verwijder mij van de lijst."),
    (U, 3.0, None, "geen ~ mail|mails|bericht|berichten|telefoontjes|mailtje|mailtjes|email|emails ~ meer / geen e mails meer", "Geen mails meer graag."),
    (U, 3.0, None, "niet meer|langer ~ mailen|benaderen|contacteren|bellen|sturen|lastigvallen|emailen|gemaild|benaderd|gebeld|gecontacteerd|lastiggevallen / niet meer|langer e mailen", "Niet meer mailen aub."),
    (U, 3.0, None, "mail|bel|benader|contacteer ~ niet meer", "Mail mij niet meer."),
    (U, 3.0, None, "stop met ~ mailen|sturen|bellen|benaderen", "Stop met mailen."),
    (U, 2.0, None, "spam", "Dit is spam."),
    (I, 2.0, None, "^doen|prima|top|akkoord|graag|goed|oke|ok / langskomen|langs komen / eens bekijken / de moeite", "Doen!"),
    (L, 1.5, Some(L), "opnieuw / ouderschapsverlof|zwangerschapsverlof|verlof", "Mail me gerust opnieuw."),
    (L, 2.5, Some(L), "ligt ~ stil / laat|laten van me|ons horen", "Voorlopig ligt alles stil."),
    (N, 3.0, None, "niet mee gediend / nut ~ niet|niet van in", "Daar zijn we niet mee gediend."),
    (W, 2.5, None, "valt onder / enkel|niet bevoegd / verkeerd|verkeerde ~ nummer", "Dat valt onder HR."),
    (U, 3.0, None, "^verwijderen|afmelden|uitschrijven|stop|stoppen / nergens meer / gegevens ~ uit|weg / hou|houd ~ op met / uit ~ mailinglijst|lijst|bestand|database", "Verwijderen."),
    (O, 0.0, None, "bedankt|dank|merci ~ voor ~ uw|je|de ~ interesse|info|informatie|voorstel|uitnodiging|bericht|mail|e", "Bedankt voor de info."),
    (O, 0.0, None, "waar ~ heeft|hebben|heb ~ u|jullie|je ~ mijn|ons ~ adres|gegevens|nummer|e|mailadres ~ vandaan", "Waar heeft u mijn adres vandaan?"),
    (L, 2.5, Some(L), "^januari|februari|maart|april|mei|juni|juli|augustus|september|oktober|november|december / vanaf #", "Oktober."),
    (I, 2.0, None, "hoe verloopt|werkt ~ implementatie|invoering|koppeling|installatie", "Hoe verloopt de implementatie?"),
    (L, 2.5, Some(L), "bel|mail|stuur me|mij ~ op|na|vanaf|in|rond", "Bel me op 5 november."),
    (I, 2.5, None, "@ ~ schikt|past|kan|lukt|prima|goed|ok|oke|akkoord|gaat / @ ~ is|komt ~ goed|prima|ok|perfect|uit / om % uur ~ past|schikt|kan|lukt|prima|goed|wel|gaat / om % uur ~ is|komt ~ prima|goed|ok|perfect / om % ~ past|schikt|kan|lukt|prima|wel", "Dinsdag schikt."),
    (I, 2.0, None, "wat dacht je|u ~ van ~ @|% / zullen we ~ @|% / @ om %", "Wat dacht je van dinsdag om 16.30 uur?"),
    (I, 3.0, None, "bel|mail me|mij ~ @ / bel me|mij ~ na|om|voor|vanaf|tussen % / bel me|mij ~ @ ~ na|om|voor|vanaf|tussen %", "Bel me morgen na 10 uur even."),
    (U, 3.0, None, "schrijf|haal ~ me|mij|ons ~ uit", "Schrijf me direct uit."),
    (N, 2.5, None, "past niet bij ons|mij|onze", "Het past niet bij ons."),
    (L, 2.5, Some(L), "volgende|volgend|vlgnde|vlg|komende ~ week|maand|kwartaal|jaar ~ bellen|mailen|spreken|contact|bel|mail / graag weer|opnieuw / loopt af op|in|per|eind", "Volgende week bellen?"),
    (U, 3.0, Some(U), "uit halen / eruit halen / overal uit / van ~ lijst|mailinglijst|verzendlijst|lijsten ~ af|halen", "Graag van jullie lijst af."),
    // An objection to processing is an opt-out; no objection to a call is a yes.
    (U, 3.0, Some(I), "bezwaar tegen / bezwaar ~ verwerking|gebruik", "Ik maak bezwaar tegen de verwerking van mijn gegevens."),
    (N, 2.5, None, "redden ons|het ~ prima|wel|zelf / besloten ~ geen|niet / stappen niet over", "Wij redden ons prima met ons huidige pakket."),
    (W, 2.5, None, "niks|niets meer te zeggen", "Ik heb daar niks meer te zeggen."),
    (O, 0.0, None, "geinteresseerd in hoe|waar|wie|waarom", "Ben wel geïnteresseerd in hoe jullie aan mijn nummer komen."),
    (I, 2.0, None, "best|wel ~ eens zien / best|wel ~ bekijken|kijken / plan ~ iets ~ in", "Plan maar iets in."),
    (N, 2.5, None, "gekozen voor ~ andere|ander / voor ~ andere|ander ~ partij|leverancier|oplossing ~ gekozen / doen|regelen ~ we ~ intern|zelf / intern|zelf ontwikkeld|gebouwd|gemaakt", "We hebben voor een andere partij gekozen."),
    (O, 2.5, Some(N), "mee verder", "We gaan er niet mee verder."),
    (I, 2.5, None, "uitnodiging", "Stuur maar een uitnodiging."),
    (W, 2.5, None, "moet u|je bij ~ zijn", "Daarvoor moet u bij inkoop zijn."),
    (L, 2.0, Some(L), "misschien ~ na|in|later|volgend|volgende", "Misschien in het najaar."),
    (L, 1.5, Some(L), "in het ~ voorjaar|najaar", "In het najaar."),
    (I, 2.0, None, "volgende stap|stappen", "Wat is de volgende stap?"),
    (W, 2.5, None, "beslist|beslissen ~ onze|de|mijn|ons ~ directeur|baas|eigenaar|manager|directie|inkoop|management / dat beslist", "Dat beslist onze directeur."),
    (U, 3.0, None, "nooit meer ~ contact|mailen|bellen / geen contact meer", "Neem nooit meer contact met mij op."),
    (N, 3.0, None, "geen meerwaarde / zien er ~ geen ~ nut|heil|brood", "Wij zien er geen meerwaarde in."),
    // A negated no is a yes: "geen bezwaar", "kan geen kwaad", "zou ik niet weigeren".
    (I, 2.0, None, "geen bezwaar|kwaad / kost|kosten ~ niks|niets", "Geen bezwaar, bel me maar."),
    (I, 0.5, None, "geen probleem|punt", "Geen probleem, vrijdag dan."),
    (O, 2.0, Some(I), "weigeren|afslaan", "Een demo zou ik niet weigeren."),
    (I, 2.0, None, "er niet|niets|niks tegen / niets|niks tegen", "Ik ben er niet tegen."),
    (I, 2.0, None, "vertel|vertelt|vertellen ~ meer / ontevreden / zoeken|zoeken ~ vervanger|alternatief|vervanging", "Vertel eens wat meer?"),
    (I, 1.5, None, "proefaccount|proefperiode|proefversie|uitproberen / gratis proef", "Hebben jullie een proefaccount?"),
    (I, 2.0, None, "koppelt|integreert|koppeling ~ met / @ dan", "Koppelt het met Exact Online?"),
    (I, 2.5, None, "kunnen|zullen we ~ volgende|komende week / volgende|komende week ~ iets|een ~ plannen|inplannen|afspreken", "Kunnen we volgende week iets plannen?"),
    (L, 2.5, Some(L), "nu|momenteel|voorlopig ~ geen prioriteit", "Interessant, maar nu geen prioriteit."),
    (W, 3.0, None, "niet mijn|onze ~ afdeling|taak|terrein|vakgebied|verantwoordelijkheid / probeer|probeert ~ inkoop|bij|hem|haar|afdeling / opvolger|opvolgster", "Dit is niet mijn afdeling."),
    (U, 3.0, None, "dit|dat het laatste bericht|mail|mailtje|e", "Ik hoop dat dit het laatste bericht is."),
    (U, 2.5, None, "nooit ~ aangemeld|ingeschreven|toestemming|gevraagd", "Ik heb me nooit aangemeld."),
    (U, 2.5, None, "als spam|ongewenst / spam ~ melden|markeren", "Ik meld dit als spam."),
    // Stop requests said politely or bluntly, a no in an idiom, a handover, waiting for a change.
    (U, 3.0, None, "laat|laten ~ me|mij|ons ~ met rust / me|mij|ons met rust laten", "Laat me met rust."),
    (U, 3.0, None, "stuur|stuurt ~ me|mij|ons ~ niks|niets meer / niks|niets meer ~ ontvangen|toegestuurd", "Stuur me niks meer."),
    (N, 2.5, None, "^ik|we|wij pas / ik|we|wij ~ pas|passen ervoor|hiervoor|daarvoor / daar pas ik|we voor", "Ik pas."),
    (N, 2.5, None, "niks|niets aan ~ veranderen|wijzigen / werken|werk|werkt ~ al jaren|lang", "Daar gaan we niks aan veranderen."),
    (W, 2.0, None, "ik stuur|zet|geef ~ ~ door / is|zijn voor ~ afdeling|inkoop|directie|boekhouding|financien|administratie", "Dat is voor de IT-afdeling, ik stuur het door."),
    (L, 2.5, None, "wachten ~ tot|totdat|na", "Ik zou wachten tot de nieuwe directeur er is."),
    (N, 2.5, None, "^bedankt|dank|dankjewel|dankuwel ~ ~ maar nee|neen / blijven|blijf ~ bij ~ onze|huidige|ons|wat", "Bedankt, maar nee."),
    (L, 3.0, None, "niet voor|voordat ~ &|q1|q2|q3|q4|eind|begin|half|volgend|volgende|komend|komende|na|zomer|najaar|voorjaar", "Niet voor februari."),
    (I, 2.0, None, "geen slecht idee / niet verkeerd|onverstandig", "Geen slecht idee, bel me donderdag."),
    (W, 2.0, None, "moet|moeten je|u aan ~ vragen", "Dat moet je aan onze inkoper vragen."),
    (O, 0.0, None, "geen ~ lange|uitgebreide|hele ~ demo|presentatie|pitch|verhaal ~ nodig", "Geen lange demo nodig, stuur me gewoon de prijzen."),
    (I, 2.0, None, "geen slecht|verkeerd moment", "Geen slecht moment, bel me maar."),
    (U, 3.0, None, "blijven|blijft ~ mailen|bellen|sturen|benaderen|appen|mailen / hoe vaak ~ nog ~ zeggen|vragen", "Waarom blijven jullie me mailen?"),
    // No more texts, "it does not fit us", passing, building it oneself, a date in the calendar.
    (U, 3.0, None, "geen ~ sms|smsjes|berichtjes|appjes|whatsapps|whatsappjes|info|informatie|aanbiedingen|reclame ~ meer", "Stuur me geen sms meer aub."),
    (N, 2.5, None, "dit|dat|het past ~ niet bij ons|mij / we|wij|ik slaan|sla ~ over / zelf|intern ~ gebouwd|ontwikkeld|opgelost|geprogrammeerd", "Dit past gewoon niet bij ons."),
    (L, 2.5, Some(L), "agenda|kalender voor|op|in ~ &|#|20*|q1|q2|q3|q4|volgend*|begin|eind|half|medio", "Zet het maar in je agenda voor maart."),
    (U, 3.0, None, "staak|staakt|stop|stopt ~ toezending*|verzending*|mailings|mailing / toezending*|verzending*|mailings ~ ~ staken|stopzetten|stoppen", "Gelieve de toezendingen te staken."),
    (U, 3.0, None, "iedere|elke verdere ~ communicatie|contact|contactname|toezending*|berichtgeving", "Ik verzoek u iedere verdere communicatie te staken."),
    (I, 3.0, None, "?kunnen|zullen we ~ ~ bellen|afspreken|praten|spreken|bellen / juiste moment / langskomen", "Kunnen we volgende week even bellen?"),
    (O, 0.0, None, "niet bellen|opbellen tussen|voor|na|om|tijdens", "Stuur maar info, maar niet bellen tussen 6 en 8."),
    (U, 3.0, None, "hoe kom ik hier|daar|ervan vanaf|af|eraf / hoe ~ meld ~ ik|me ~ af", "Hoe kom ik hier vanaf?"),
    (W, 2.0, None, "weet ~ niet wie ~ precies|dat|het|erover", "Ik weet niet wie dat precies doet."),
    (I, 3.0, None, "bel|bellen ~ na vieren|vijven|drieen|tweeen|zessen|enen|elven|twaalven", "Klinkt goed, bel me na vieren."),
    (N, 3.0, None, "over dit|deze ~ product|onderwerp|aanbod|voorstel ~ ~ niet meer ~ mailen|benaderen|bellen|sturen|contacteren", "Over dit product hoef je me niet meer te mailen."),
    (O, 0.0, None, "geen ~ belletje|call|demo|presentatie|pitch|afspraak|meeting|gesprek|toelichting ~ nodig", "Geen belletje nodig, stuur me gewoon de prijzen."),
    (I, 2.0, None, "stuur|stuurt ~ ~ prijs*|prijzen|prijslijst|offerte|tarieven|brochure|voorstel", "Ik hoef geen demo, maar stuur me wel de prijslijst."),
    // A year said alone.
    (L, 2.5, Some(L), "^volgend jaar|kwartaal / ^volgende maand / ^misschien volgend jaar|kwartaal", "Volgend jaar."),
    // A no to a call that asks for the prices is a yes.
    (O, 0.0, None, "nee een|de ~ call|belletje|gesprek|afspraak|demo|meeting hoeft ~ niet / een|de ~ call|belletje|gesprek|afspraak|demo|meeting hoeft ~ niet", "Nee, een call hoeft niet, stuur me de prijzen."),
    // Having it already, "nee hoor", "niet aan ons besteed", the answer is no, having chosen
    // another; someone who no longer works there since a time.
    (N, 2.5, None, "hebben|heb we|ik al / we|wij hebben al ~ leverancier|tool|oplossing|systeem|partner|pakket|iets / ik heb al ~ leverancier|tool|oplossing|systeem|partner|pakket|iets", "Nee hoor, hebben we al."),
    (N, 1.5, None, "^nee|neen hoor", "Nee hoor."),
    (N, 2.5, None, "niet aan ons|mij besteed / aan ons|mij niet besteed", "Niet aan ons besteed, bedankt."),
    (N, 2.5, None, "is het ~ nee / antwoord is nee / voor iets|wat anders gegaan|gekozen / gekozen voor ~ iets|wat anders", "Voor ons is het nee."),
    (W, 3.0, None, "werk|werkt|werken|werkte hier|daar|bij|al|sinds ~ ~ niet meer", "Kees werkt hier sinds de zomer niet meer."),
    // A stop request with an adverb between ("verwijder per direct mijn adres").
    (U, 3.0, None, "verwijder|verwijdert|wis ~ mijn|ons adres|e-mailadres|emailadres|mailadres|gegevens|nummer", "Verwijder per direct mijn adres."),
    (N, 3.0, None, "verlengd", "We hebben net ons contract verlengd tot eind 2028."),
    (W, 3.0, None, "overgestapt|overgeplaatst naar / andere functie|afdeling|baan|werkgever / wie dit ~ ~ beslist|regelt|oppakt|doet", "Ik ben overgestapt naar een andere functie."),
    (L, 2.5, Some(L), "dit jaar ~ niets|niks|geen ~ nieuws|meer", "Dit jaar gaan we niets nieuws meer invoeren."),
    (O, 0.0, None, "jullie|u ~ interesse hadden|had|hebben", "Mijn collega zei dat jullie interesse hadden in een samenwerking."),
    (I, 1.5, None, "?om %", "Kunnen we dinsdag om 10 bellen?"),
    (I, 3.0, None, "bel|bellen|belt me ~ @ / bel|bellen|belt me ~ @ na|om|rond|voor|tussen", "Bel me even morgen na de lunch?"),
    (N, 3.0, None, "gaan er niet op in / niet op ingaan", "We hebben het intern besproken en we gaan er niet op in."),
    (O, 0.0, None, "bedankt|dank voor de moeite", "Bedankt voor de moeite."),
];

const IT: &[Row] = &[
    (I, 2.0, Some(N), "interess*", "Mi interessa."),
    (I, 2.0, None, "sembra ~ interessante|buono|ottimo|ottima", "Mi sembra interessante."),
    (I, 2.0, None, "volentieri / con piacere", "Volentieri."),
    (I, 2.0, None, "maggiori|piu ~ informazioni|dettagli|info", "Vorrei maggiori informazioni."),
    (I, 2.0, None, "inviatemi|mandatemi|mandami|inviami / mi mandi|invii|manda|mandate|inviate", "Mi mandi il listino."),
    (I, 2.0, None, "quanto ~ costa|costano|viene", "Quanto costa?"),
    (I, 1.5, None, "prezzo|prezzi|preventivo|listino|offerta|proposta", "Mi fate un preventivo?"),
    (I, 1.5, None, "chiamata|riunione|incontro|demo|call|videochiamata|appuntamento|sentirci", "Fissiamo un appuntamento."),
    (I, 2.0, Some(U), "chiamami|chiamatemi / mi chiami|chiama|chiamate", "Chiamami domani."),
    (I, 2.0, None, "sentiamoci|parliamone|organizziamo|organizzate", "Sentiamoci giovedì."),
    // "Ottimo" said alone accepts; inside a sentence it praises something ("un caffè ottimo").
    (I, 1.5, None, "certo|perfetto|ok / ^ottimo / va bene / d accordo", "Certo!"),
    (I, 1.5, None, "^si|certo|ok|volentieri / ^si grazie / ^certo che si", "Sì"),
    (L, 3.0, Some(L), "non ora|adesso|ancora / ora|adesso no", "Non ora."),
    (L, 3.0, Some(L), "al momento no|non / per ora no|non / per il momento no|non / in questo momento no|non", "Al momento no."),
    (L, 2.0, Some(L), "piu avanti|tardi / piu in la / in futuro / prossimamente", "Più avanti."),
    (L, 2.5, Some(L), "tra|fra # giorni|settimane|mesi|giorno|settimana|mese|gg", "Tra 2 mesi."),
    (L, 1.0, Some(L), "prossima|prossimo ~ settimana|sett|mese|anno|trimestre", "Il prossimo trimestre."),
    (L, 2.0, Some(L), "anno|mese|settimana|sett prossimo|prossima", "L'anno prossimo."),
    (L, 1.5, Some(L), "a|da|dal|dall|al|dopo|ad|entro|inizio|fine|meta ~ gennaio|febbraio|marzo|aprile|maggio|giugno|luglio|agosto|settembre|ottobre|novembre|dicembre", "A marzo."),
    (L, 1.0, Some(L), "trimestre / semestre", "Nel terzo trimestre."),
    (L, 2.5, Some(L), "ricontattarmi|ricontattatemi|ricontattateci|ricontattami|ricontatti|risentirci|risentiamoci|riprendiamo|riparliamone|aggiorniamoci|riaggiorniamoci|riparliamo|risentiamo", "Ricontattatemi a marzo."),
    (L, 2.5, Some(L), "dopo ~ ferie|estate|feste|natale|pasqua|chiusura", "Dopo le ferie."),
    (O, 3.0, Some(L), "momento giusto|adatto|opportuno / buon momento", "Non è il momento giusto."),
    (L, 1.5, Some(L), "periodo|impegnati|impegnato|pieni|presi", "È un periodo pieno."),
    (L, 2.5, Some(L), "scriva|scrivetemi|scrivimi|sentiamoci|richiami|richiamatemi|chiami|chiamami|chiamatemi|riscriva|ricontatti ~ dal|dall|da|a|in|tra|fra|dopo", "Mi scriva dal 7 settembre."),
    (N, 3.0, None, "no grazie|grz", "No grazie."),
    (N, 1.5, None, "^no", "No"),
    (N, 2.0, Some(N), "bisogno", "Non ne abbiamo bisogno."),
    (N, 2.5, None, "gia ~ fornitore|soluzione|partner|contratto|sistema|abbiamo|usiamo|lavoriamo|coperti|sistemati|serviti|gestionale|posto / abbiamo|usiamo|utilizziamo gia / siamo ~ a posto", "Abbiamo già un fornitore."),
    (N, 1.5, None, "soddisfatti|contenti", "Siamo soddisfatti."),
    (N, 2.5, None, "^passo / passiamo", "Passo."),
    (N, 2.5, None, "non fa|e per noi / non ci serve / non serve", "Non fa per noi."),
    (O, 1.5, Some(N), "budget", "Non abbiamo budget."),
    (W, 2.5, Some(W), "persona ~ giusta|corretta|indicata|responsabile|adatta", "Non sono la persona giusta."),
    (W, 3.0, None, "non lavor* piu / non faccio|fa piu parte / non sono|e piu", "Non lavoro più in Acme."),
    (W, 3.0, None, "lasciato ~ azienda|societa|incarico|ruolo", "Ho lasciato l'azienda."),
    (O, 2.5, Some(W), "responsabile|competenza|referente / mi|si occupo|occupa / se|me|ce ne occupa|occupo|occupiamo", "Non mi occupo di questo."),
    (W, 2.0, None, "contatti|contattate|rivolgersi|rivolgetevi|rivolgiti / scriva|scrivi a / si rivolga", "Si rivolga alla collega."),
    (W, 0.5, None, "collega|colleghi", "Chieda al mio collega."),
    (W, 2.0, None, "inoltrato|inoltrata|girato|girata|inoltro / giro la|il|tua|sua|vostra|questa ~ mail|email|messaggio|richiesta", "Ho inoltrato la mail."),
    (W, 2.0, None, "pensione", "Sono in pensione."),
    (W, 3.0, None, "numero sbagliato / sbagliato numero", "Numero sbagliato."),
    (U, 3.0, None, "disiscriv*|disiscrizione", "Vorrei disiscrivermi."),
    (U, 3.0, None, "cancell*|rimuov*|togli*|tolga|tolgano|elimin* ~ lista|mailing|database|indirizzo|dati|contatti|elenco|mi|me|numero", "Rimuovetemi dalla lista."),
    (U, 3.0, None, "rimuovetemi|cancellatemi|toglietemi|cancellami|rimuovimi|toglimi", "Cancellatemi."),
    (U, 3.0, None, "non ~ contattatemi|scrivetemi|chiamatemi|inviatemi|mandatemi|contattarmi|scrivermi|disturbatemi ~ piu", "Non contattatemi più."),
    (U, 2.5, None, "smettete|smettetela|smettila ~ di|con", "Smettetela di scrivermi."),
    (U, 2.5, Some(U), "ricevere ~ piu|email|mail|messaggi", "Non voglio più ricevere email."),
    (O, 3.0, Some(U), "voglio|vogliamo|desidero|desideriamo ~ piu ricevere / voglio|vogliamo|desidero|desideriamo ~ ricevere ~ niente|nulla", "Non voglio più ricevere niente da voi."),
    (W, 2.5, None, "non so chi ~ segue|gestisce|occupa|decide|preciso|esattamente / la|lo|le|li segue|gestisce / se ne occupa", "La fatturazione la segue l'amministrazione."),
    (N, 3.0, None, "non serve|occorre che ~ ~ ricontatt*|richiam*|riscriv*|scriv*|contatt*", "Non serve che mi ricontatti per questa proposta."),
    (U, 2.0, None, "spam", "Questo è spam."),
    (U, 2.5, None, "^basta", "Basta."),
    (I, 2.0, None, "^daje|perfetto|ok|volentieri|certo|andata / ci sta / mi giri / slot", "Daje!"),
    (L, 2.5, Some(L), "ricontatto|ricontattiamo / appena ~ calmano|finito", "Appena si calmano le acque la ricontatto io."),
    (O, 2.5, Some(N), "fa al caso nostro", "Non fa al caso nostro."),
    (N, 2.5, None, "^passo / no grazie / nn ci serve", "Passo."),
    (W, 3.0, None, "lasciato ~ funzione|ruolo|incarico / non seguo piu / non me ne occupo piu / sbagliato ~ persona|numero / non sono il|la ~ sig|signor|signora / non sono la ~ sig ra", "Ho sbagliato persona."),
    (U, 3.0, None, "non|nn ~ scrivetemi|contattatemi|chiamatemi ~ piu|piu / ^stop|basta|cancellami|cancella", "Nn scrivetemi più."),
    (O, 0.0, None, "grazie|ringrazio|ringraziamo|ringraziando ~ per ~ l|il|la ~ interesse|proposta|informazioni|invito|messaggio|mail", "Grazie per l'interesse."),
    (O, 0.0, None, "dove ~ ha|avete|hai ~ preso|trovato|ottenuto|avuto ~ mio|miei ~ indirizzo|dati|numero|contatto|email", "Dove avete preso il mio indirizzo?"),
    (L, 2.5, Some(L), "^gennaio|febbraio|marzo|aprile|maggio|giugno|luglio|agosto|settembre|ottobre|novembre|dicembre / a partire dal|da # / dal #", "Ottobre."),
    (I, 2.0, None, "come funziona ~ implementazione|integrazione|avvio|avviamento|migrazione / si integra / quanto tempo ~ serve|ci vuole ~ per|prima", "Come funziona l'integrazione?"),
    (I, 2.5, None, "@ ~ va bene|benissimo / @ ~ mi|ci ~ va|sta|torna ~ bene / @ ~ ok|perfetto|posso|si|libero|libera|disponibile|liberi / alle % ~ va bene|benissimo / alle % ~ perfetto|ok|si|disponibile|libero|libera / alle % ~ mi|ci ~ va|sta|torna", "Martedì va bene."),
    (I, 2.0, None, "che ne dice|dici|pensa|pensi ~ di|del ~ @|% / @ alle % / facciamo ~ @|%", "Che ne dice di martedì alle 11?"),
    (I, 3.0, None, "mi chiami|chiama|richiami ~ @ / chiamami|chiamarmi|chiamatemi|richiamami ~ @ / mi chiami|chiama ~ @ ~ dopo|alle|verso|dalle|le ~ % / chiamami|chiamarmi ~ @ ~ dopo|alle|verso|dalle|le ~ % / mi chiami|chiama|chiamami|chiamarmi ~ dopo|alle|verso|dalle ~ % / chiamami|chiamarmi|chiamatemi|richiamami ~ dopo|alle|verso|dalle|prima ~ %", "Mi chiami domani dopo le 10."),
    (U, 3.0, None, "basta ~ messaggi|mail|email|sms|msg|chiamate|telefonate|contatti", "Basta messaggi."),
    (N, 2.5, None, "lasci|lascia|lasciamo ~ stare|perdere / non e il caso", "Lasci stare, non è il caso."),
    (L, 2.5, Some(L), "anno|mese|settimana|trimestre ~ ne|ci ~ parliamo|sentiamo|vediamo|risentiamo", "Il prossimo anno ne parliamo."),
    (U, 3.0, None, "mi oppongo / opposizione al trattamento / ^basta cosi", "Mi oppongo al trattamento dei miei dati."),
    (O, 3.0, Some(U), "essere contattat*|disturbat*|ricontattat*", "Non voglio più essere contattato."),
    (N, 2.5, None, "^macche / non intendiamo|vogliamo|pensiamo ~ cambiare / abbiamo deciso di non", "Non intendiamo cambiare."),
    (W, 2.5, None, "num|numero ~ e mio|mia / nn|non c e nessun|nessuna", "Il numero è mio da anni."),
    (O, 0.0, None, "interessat* a capire|sapere come|chi|dove|perche|da", "Sono interessato a capire come avete avuto il mio contatto."),
    (I, 2.0, Some(N), "favorevole|favorevoli / mi puo|potete|potrebbe ~ mandare|inviare|girare", "Sono favorevole."),
    (N, 2.5, None, "scelto|optato ~ altro|altra ~ fornitore|soluzione|partner / gestiamo|facciamo|risolviamo ~ internamente / gestiamo|facciamo|risolviamo|sviluppato|sviluppata|sviluppiamo ~ in casa / gestiamo|facciamo|risolviamo|sviluppato|sviluppata|sviluppiamo ~ internamente / gia risolto", "Abbiamo scelto un altro fornitore."),
    (O, 2.5, Some(N), "procediamo|procedere / andiamo avanti", "Non procediamo."),
    (I, 2.5, None, "invito", "Mi mandi un invito."),
    (O, 3.0, Some(U), "voglio|vogliamo ~ essere ~ piu ~ contattat*|disturbat*|chiamat*|ricontattat* / voglio|vogliamo ~ essere ~ contattat*|disturbat*|chiamat*|ricontattat*", "Non voglio essere più contattato."),
    (O, 0.0, None, "la|vi|ti|le invito a|ad", "La invito a ricontattarci nel quarto trimestre."),
    (W, 2.5, None, "deve|dovete|devi ~ sentire|contattare|chiedere|parlare|scrivere ~ l|il|la|ufficio", "Per questo deve sentire l'ufficio acquisti."),
    (L, 2.0, Some(L), "forse ~ in|a|dopo|piu|tra|fra", "Forse in autunno."),
    (L, 1.5, Some(L), "in|a ~ autunno|primavera|estate|inverno", "In autunno."),
    (I, 2.0, None, "prossimo passo|passi", "Quale sarebbe il prossimo passo?"),
    (W, 2.5, None, "non decido io / decide|decidono ~ il|la|lo|i ~ titolare|capo|direttore|direttrice|responsabile|socio|soci", "Non decido io, decide il titolare."),
    (N, 3.0, None, "ne ora ne ~ mai|dopo|poi / neanche|nemmeno in futuro", "Né ora né mai."),
    (O, 2.5, Some(N), "vediamo ~ valore|utilita|vantaggio|senso", "Non ne vediamo l'utilità."),
    // A negated no is a yes: "nessun problema", "niente in contrario", "non direi di no", "non costa nulla".
    (I, 0.5, None, "nessun problema|problemi / non c e problema", "Nessun problema, venerdì allora."),
    (I, 2.0, Some(I), "nulla|niente in contrario / costa ~ nulla|niente / male non fa", "Non costa nulla sentirci."),
    (O, 2.0, Some(I), "contrario|contraria|contrari|obiezioni|obiezione / rifiuterei|rifiutare", "Non sono contrario a una demo."),
    (N, 2.5, Some(I), "direi|dico ~ di no", "Le dico di no."),
    // "Not yet" about having a tool is a need, not a deferral.
    (O, 0.0, None, "per ora|ancora|adesso non ~ abbiamo|usiamo|utilizziamo ~ nessun|nessuno|nessuna|strumento|strumenti|soluzione|software|sistema", "Per ora non abbiamo nessuno strumento."),
    (I, 2.0, None, "racconti|raccontami|raccontatemi|dica|dimmi ~ di piu|piu / cerchiamo|cercando ~ alternativa|sostituto|soluzione / insoddisfatti|insoddisfatto|scontenti", "Mi racconti di più."),
    (I, 2.5, None, "possiamo|potremmo ~ sentirci|vederci|parlare|parlarne|fissare|organizzare / sentirci|vederci|call|chiamata|slot|appuntamento|incontro|demo ~ ~ settimana prossima / sentirci|vederci|call|chiamata|slot|appuntamento|incontro|demo ~ ~ prossima settimana", "Possiamo sentirci la settimana prossima?"),
    (I, 2.0, None, "@ allora / dare|do ~ occhiata / un occhiata", "Venerdì allora."),
    (N, 2.5, None, "non rientra|rientrano / non ~ rientra ~ nostr*", "Non rientra nelle nostre esigenze."),
    (W, 2.5, None, "provi|provate con / provi|provate a ~ sentire|chiedere|contattare|scrivere / successore|sostituto", "Provi con l'ufficio acquisti."),
    (U, 3.0, None, "sia ~ ultimo|ultima ~ messaggio|mail|email|volta", "Che questo sia l'ultimo messaggio."),
    (U, 2.5, None, "mai ~ iscritto|iscritta|registrato|registrata|autorizzato|chiesto", "Non mi sono mai iscritto."),
    (U, 2.5, None, "segnalare|segnalo|segnalero ~ spam / come spam", "Vi segnalo come spam."),
    // Stop requests said politely or bluntly, waiting for a change, a month that is past.
    (U, 3.0, None, "lasci* ~ in pace", "Mi lasci in pace."),
    (O, 2.5, Some(U), "ricevere ~ comunicazion*|newsletter|sms|altre|altri|ulteriori|vostre|vostri|offerte|promozioni", "Non voglio più ricevere vostre comunicazioni."),
    (L, 2.5, None, "aspettare ~ che|fino|dopo / aspettiamo ~ che|fino|dopo", "Preferisco aspettare che finisca l'anno."),
    (O, 0.0, None, "sentiti|visti|parlati|parlato|incontrati|conosciuti ~ &", "Ci eravamo sentiti a marzo per un'altra cosa, lei chi è?"),
    (N, 2.5, None, "^grazie|ringrazio ~ ~ ma no / ^preferisco|preferiamo di no / restiamo|rimaniamo|resteremo|rimarremo ~ con|sul|sulla ~ nostro|nostra|attuale|quello|quella", "Grazie, ma no."),
    (O, 2.5, Some(N), "quello che ~ cerchiamo|cercavamo|serve|cerco / convince|convincono|convinto|convinti", "Non è quello che cerchiamo."),
    (L, 3.0, None, "non prima ~ &|fine|inizio|meta|prossimo|prossima|estate|autunno|inverno|primavera", "Non prima di febbraio."),
    (I, 2.0, None, "non e una cattiva idea / non sarebbe male / non e male", "Non è una cattiva idea, sentiamoci giovedì."),
    (O, 3.0, Some(U), "voglio|desidero ~ piu ~ messaggi|mail|email|sms|chiamate|telefonate|comunicazioni|contatti", "Non voglio più messaggi."),
    (N, 3.0, None, "ne quest|questo|questa ~ anno|mese|trimestre ne", "Né quest'anno né il prossimo."),
    (I, 2.0, None, "non e ~ brutto|cattivo momento", "Non è un brutto momento, chiamami."),
    (U, 3.0, None, "continuate|continui ~ a ~ scrivermi|chiamarmi|contattarmi|mandarmi|scrivere|inviare|mandare|chiamare / quante volte ~ dire|dirvi|chiedere|ripetere", "Perché continuate a scrivermi?"),
    // Passing after thanks, "ci sto", a request to suspend the mailings.
    (N, 2.5, None, "^grazie|ringrazio ~ ~ ma passo|passiamo", "Grazie, ma passo."),
    (I, 2.0, None, "^ci sto / ok|okay ci sto / va bene ci sto", "Ok, ci sto."),
    (U, 3.0, None, "sospendete|sospenda|interrompete|interrompa|cessate|cessi ~ invio|invii|email|mail|comunicazioni|messaggi", "Sospendete gli invii a questo indirizzo."),
    (N, 2.5, None, "sviluppato|sviluppata|costruito|costruita ~ in casa / sviluppato|sviluppata|costruito|costruita ~ internamente / sviluppato|sviluppata|costruito|costruita da noi / fatto|fatta in casa", "L'abbiamo sviluppato in casa."),
    // A year said alone.
    (L, 2.5, Some(L), "^il prossimo anno|trimestre / ^forse il|l prossimo anno|trimestre / ^forse l anno prossimo", "Il prossimo anno."),
    // A no to a call that asks for the prices is a yes.
    (O, 0.0, None, "no non serve|servono ~ call|chiamata|riunione|incontro|demo|presentazione / non serve|servono ~ call|chiamata|riunione|incontro|demo|presentazione", "No, non serve una call, mandami solo i prezzi."),
    // A stop request with an adverb between ("cancelli subito il mio indirizzo").
    (U, 3.0, None, "cancell*|rimuov*|elimin*|tolga|togli* ~ ~ mio|miei|nostro|nostri indirizzo|dati|numero|contatto|email|recapito", "Cancelli subito il mio indirizzo."),
    (N, 3.0, None, "rinnovato|rinnovare|firmato ~ con|per|il|contratto", "Abbiamo appena rinnovato per tre anni con il nostro fornitore."),
    (W, 3.0, None, "lasciato ~ ufficio|reparto|posto|lavoro|studio|negozio|scuola|clinica|ospedale|gruppo|team|comune|ente", "Ho lasciato l'ufficio acquisti a febbraio."),
    (O, 0.0, None, "siete|foste|sareste|eravate interessati|interessate|interessato", "Scrive che siete interessati al bando regionale?"),
    (U, 3.0, None, "non mi|ci scriva|scrivete|scrivere|contatti|contattate piu", "No grazie, e non mi scriva più."),
    (L, 2.5, Some(L), "puo|puoi|potete|potra ~ riprovare|ricontattarmi|riscrivermi|risentirci / riprovi|riprovate|riprova ~ piu|tra|fra|dopo|a|in|verso", "Più avanti nell'anno può riprovare."),
    (N, 3.0, None, "non daremo|diamo seguito", "Non daremo seguito alla Sua proposta."),
    (I, 2.0, None, "?alle %", "Ci sentiamo giovedì alle 15?"),
];

/// A table with its language.
fn rows(language: Language) -> &'static [Row] {
    match language {
        Language::En => EN,
        Language::De => DE,
        Language::Fr => FR,
        Language::Es => ES,
        Language::Pt => PT,
        Language::Nl => NL,
        Language::It => IT,
    }
}

/// Every phrase of `language`.
pub fn phrases(language: Language) -> impl Iterator<Item = Phrase> {
    rows(language)
        .iter()
        .map(|&(intent, weight, negated, pattern, example)| Phrase {
            intent,
            weight,
            negated,
            pattern,
            example,
        })
}

/// Words that negate what follows them (or, for the last group, what precedes them).
const NEGATORS_BEFORE: &[&str] = &[
    "not", "no", "never", "nn", "isnt", "dont", "doesnt", "cant", "wont", "nicht", "kein", "keine",
    "keinen", "keiner", "nie", "niemals", "ne", "n", "pas", "jamais", "nunca", "nao", "niet",
    "geen", "nooit", "non", "mai", "nem", "without", "ohne", "sin", "sem", "zonder", "senza",
    "sans", "aucun", "aucune", "ningun", "ninguna", "ninguno", "nenhum", "nenhuma", "nessun",
    "nessuna", "nessuno", "ned", "nit",
];
const NEGATORS_AFTER: &[&str] = &["nicht", "niet", "pas", "not", "nie", "ned", "nit"];

/// Whether `word` negates in `language`: in an Italian reply the French `ne` does not ("che ne
/// dice"), in a German one the Italian `mai` does not ("ab Mai"), in a Portuguese one the Spanish
/// `no` does not (Portuguese "no", "in the").
fn negates(word: &str, language: Language) -> bool {
    let words: &[&str] = match language {
        Language::En => &[
            "not", "no", "never", "isnt", "dont", "doesnt", "cant", "wont", "without",
        ],
        Language::De => &[
            "nicht", "kein", "keine", "keinen", "keiner", "keinem", "nie", "niemals", "ohne",
            "ned", "nit",
        ],
        Language::Fr => &["ne", "n", "pas", "jamais", "non", "sans", "aucun", "aucune"],
        Language::Es => &["no", "nunca", "sin", "ningun", "ninguna", "ninguno"],
        Language::Pt => &["nao", "nunca", "sem", "nem", "nenhum", "nenhuma"],
        Language::Nl => &["niet", "geen", "nooit", "zonder"],
        Language::It => &[
            "non", "no", "mai", "nn", "senza", "nessun", "nessuna", "nessuno",
        ],
    };
    words.contains(&word)
}

/// Number words a `#` takes besides digits.
const NUMBER_WORDS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "a", "couple", "few", "ein", "einem", "einer", "zwei", "drei", "vier", "funf",
    "sechs", "sieben", "acht", "neun", "zehn", "zwolf", "un", "une", "deux", "trois", "quatre",
    "cinq", "dix", "douze", "uno", "una", "dos", "tres", "cuatro", "cinco", "seis", "diez", "doce",
    "um", "uma", "duas", "quatro", "dez", "een", "twee", "drie", "vijf", "zes", "tien", "twaalf",
    "due", "tre", "quattro", "cinque", "sei", "dieci", "dodici", "quindici",
];

/// One element of a compiled pattern.
#[derive(Debug, Clone)]
enum Element {
    /// Any of these words (exact) or prefixes, or (`@`) a day close at hand, or (`%`) a time of
    /// day.
    Word {
        exact: Vec<String>,
        prefixes: Vec<String>,
        day: bool,
        clock: bool,
        month: bool,
    },
    /// Up to two words of anything.
    Gap,
    /// A number.
    Number,
}

impl Element {
    fn matches(&self, token: &Token) -> bool {
        let word = token.word.as_str();
        match self {
            Element::Word {
                exact,
                prefixes,
                day,
                clock,
                month,
            } => {
                exact.iter().any(|w| w == word)
                    || prefixes.iter().any(|p| word.starts_with(p.as_str()))
                    || (*day && token.class.day)
                    || (*clock && token.class.clock.is_some())
                    || (*month && token.class.month)
            }
            Element::Number => token.class.number,
            Element::Gap => true,
        }
    }

    /// The one class of word this element is (a day, a time, a month, a number), if it is
    /// nothing else: the index tries such a phrase only where such a word stands.
    fn class(&self) -> Option<usize> {
        match self {
            Element::Number => Some(3),
            Element::Word {
                exact,
                prefixes,
                day,
                clock,
                month,
            } if exact.is_empty() && prefixes.is_empty() => match (day, clock, month) {
                (true, false, false) => Some(0),
                (false, true, false) => Some(1),
                (false, false, true) => Some(2),
                _ => None,
            },
            _ => None,
        }
    }
}

/// What a word is, worked out once per text rather than once per phrase tried.
#[derive(Debug, Clone, Copy, Default)]
pub struct Class {
    /// A day close at hand (`@`).
    pub day: bool,
    /// A time of day (`%`): `Some(true)` written as one ("3pm"), `Some(false)` a bare number.
    pub clock: Option<bool>,
    /// A month's name (`&`).
    pub month: bool,
    /// A number (`#`).
    pub number: bool,
}

impl Class {
    fn of(word: &str) -> Class {
        // The words of the three lists, looked up once rather than scanned per word.
        static WORDS: OnceLock<HashMap<&'static str, Class>> = OnceLock::new();
        let words = WORDS.get_or_init(|| {
            let mut m: HashMap<&'static str, Class> = HashMap::new();
            for w in DAY_WORDS {
                m.entry(w).or_default().day = true;
            }
            for w in NUMBER_WORDS {
                m.entry(w).or_default().number = true;
            }
            for w in crate::inbound::return_date::month_names() {
                m.entry(w).or_default().month = true;
            }
            m
        });
        let mut class = words.get(word).copied().unwrap_or_default();
        class.day |= word.len() >= 5 && WEEKDAYS.iter().any(|d| word.starts_with(d));
        class.number |= !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit());
        class.clock = clock_word(word);
        class
    }
}

/// Weekdays (any word they start: "Dienstagnachmittag", "woensdagmiddag", "tuesdays") in the
/// seven languages, folded.
const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "montag",
    "dienstag",
    "mittwoch",
    "donnerstag",
    "freitag",
    "samstag",
    "sonntag",
    "lundi",
    "mardi",
    "mercredi",
    "jeudi",
    "vendredi",
    "samedi",
    "dimanche",
    "lunes",
    "martes",
    "miercoles",
    "jueves",
    "viernes",
    "maandag",
    "dinsdag",
    "woensdag",
    "donderdag",
    "vrijdag",
    "zaterdag",
    "zondag",
    "lunedi",
    "martedi",
    "mercoledi",
    "giovedi",
    "venerdi",
];

/// Other words of a day close at hand, matched whole (the Portuguese weekdays are also
/// ordinals, so only whole: "quarta" but not "quartal").
const DAY_WORDS: &[&str] = &[
    "mon",
    "tue",
    "tues",
    "wed",
    "thu",
    "thur",
    "thurs",
    "fri",
    "tomorrow",
    "tmrw",
    "tmw",
    "today",
    "tonight",
    "afternoon",
    "morgen",
    "ubermorgen",
    "heute",
    "nachmittag",
    "vormittag",
    "vormittags",
    "nachmittags",
    "demain",
    "aujourd",
    "manana",
    "hoy",
    "sabado",
    "domingo",
    "segunda",
    "terca",
    "quarta",
    "quinta",
    "sexta",
    "amanha",
    "hoje",
    "vandaag",
    "vanmiddag",
    "vanochtend",
    "vanavond",
    "overmorgen",
    "domani",
    "oggi",
    "dopodomani",
    "pomeriggio",
    "stasera",
];

/// A word that says a time of day ("3pm", "14h30", "4:30", "noon", "lunch"): `Some(true)`; a bare
/// number that may be one ("at 2"): `Some(false)`, which the next word decides.
fn clock_word(word: &str) -> Option<bool> {
    // Dutch says an hour as a word of its own: "na tienen", "om twaalven".
    if matches!(
        word,
        "noon"
            | "midday"
            | "midi"
            | "mittag"
            | "mediodia"
            | "mezzogiorno"
            | "lunch"
            | "mittagessen"
            | "mittagspause"
            | "dejeuner"
            | "almoco"
            | "pranzo"
            | "tweeen"
            | "drieen"
            | "vijven"
            | "zessen"
            | "zevenen"
            | "achten"
            | "negenen"
            | "tienen"
            | "elven"
            | "twaalven"
    ) {
        return Some(true);
    }
    let digits = word.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 2 || word[..digits].parse::<u32>().ok()? > 24 {
        return None;
    }
    let rest = &word[digits..];
    let minutes = |m: &str| m.len() == 2 && m.parse::<u32>().is_ok_and(|m| m < 60);
    let suffix = |x: &str| {
        matches!(
            x,
            "am" | "pm" | "h" | "u" | "uhr" | "uur" | "hs" | "hrs" | "hr" | "ish" | "en"
        )
    };
    let clock = rest.is_empty()
        || suffix(rest)
        || rest
            .strip_prefix([':', 'h', '.'])
            .is_some_and(|m| minutes(m) || minutes(m.get(..2).unwrap_or("")) && suffix(&m[2..]));
    clock.then_some(!rest.is_empty())
}

/// Whether the two words after a weekday make it a date: a day of the month and a month, or a
/// month and a day.
fn dated_day(a: &str, b: &str) -> bool {
    let month = |w: &str| crate::inbound::return_date::month_of(w).is_some();
    (is_day_number(a) && month(b)) || (month(a) && is_day_number(b))
}

/// A day of the month in digits, with or without an ordinal's ending ("3", "3rd", "1er").
fn is_day_number(w: &str) -> bool {
    let digits = w.chars().take_while(char::is_ascii_digit).count();
    (1..=2).contains(&digits)
        && matches!(
            &w[digits..],
            "" | "st" | "nd" | "rd" | "th" | "er" | "e" | "o"
        )
}

/// Whether the word after a bare number makes it a count or a date rather than a time ("2
/// weeks", "15 April", "3 users").
fn counts(next: &str) -> bool {
    crate::inbound::return_date::month_of(next).is_some()
        || matches!(
            next.trim_end_matches('s'),
            "day"
                | "week"
                | "month"
                | "year"
                | "quarter"
                | "minute"
                | "user"
                | "seat"
                | "people"
                | "person"
                | "employee"
                | "site"
                | "location"
                | "agent"
                | "tag"
                | "tage"
                | "woche"
                | "wochen"
                | "monat"
                | "monate"
                | "monaten"
                | "jour"
                | "semaine"
                | "moi"
                | "an"
                | "dia"
                | "semana"
                | "mese"
                | "mes"
                | "dag"
                | "dagen"
                | "weken"
                | "maand"
                | "maanden"
                | "giorni"
                | "settimana"
                | "settimane"
                | "mesi"
                | "ano"
                | "anno"
                | "jahr"
                | "jaar"
                | "euro"
                | "eur"
                | "dollar"
                | "usd"
                | "mitarbeiter"
                | "mitarbeitende"
                | "utilisateur"
                | "usuario"
                | "utente"
                | "gebruiker"
        )
}

/// A phrase ready to match.
#[derive(Debug, Clone)]
struct Compiled {
    language: Language,
    phrase: Phrase,
    elements: Vec<Element>,
    /// `^`: a whole sentence of its own ("No." but not "No es …"), or one ended by a comma.
    anchored: bool,
    /// `?`: only in a sentence that ends with a question mark.
    question: bool,
}

fn compile(pattern: &str) -> Vec<Element> {
    pattern
        .split_whitespace()
        .map(|part| match part {
            "~" => Element::Gap,
            "#" => Element::Number,
            alternatives => {
                let (mut exact, mut prefixes) = (Vec::new(), Vec::new());
                let (mut day, mut clock, mut month) = (false, false, false);
                for alt in alternatives.split('|') {
                    match alt {
                        "@" => day = true,
                        "%" => clock = true,
                        "&" => month = true,
                        _ => match alt.strip_suffix('*') {
                            Some(p) => prefixes.push(p.to_string()),
                            None => exact.push(alt.to_string()),
                        },
                    }
                }
                Element::Word {
                    exact,
                    prefixes,
                    day,
                    clock,
                    month,
                }
            }
        })
        .collect()
}

/// The compiled tables, indexed by the words a phrase can start with.
struct Index {
    /// First word (exact) → phrases.
    exact: HashMap<String, Vec<usize>>,
    /// Phrases whose first element is a day, a time, a month, a number ([`Element::class`]):
    /// tried only at such a word.
    classes: [Vec<usize>; 4],
    /// Phrases whose first element is words and prefixes of two letters or more, by the first
    /// two letters of each: a word can only match such an element if it starts with them.
    starts: HashMap<String, Vec<usize>>,
    /// Phrases whose first element is a short prefix, a mixture or a gap: tried at every token.
    loose: Vec<usize>,
    phrases: Vec<Compiled>,
}

/// The first two letters of `word` (the key of [`Index::starts`]), or `None` when it is
/// shorter.
fn start(word: &str) -> Option<&str> {
    let (end, _) = word.char_indices().nth(1)?;
    let end = end + word[end..].chars().next()?.len_utf8();
    Some(&word[..end])
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut phrases = Vec::new();
        for language in Language::ALL {
            for phrase in self::phrases(language) {
                for alternative in phrase.pattern.split(" / ") {
                    let (question, alternative) = match alternative.strip_prefix('?') {
                        Some(rest) => (true, rest),
                        None => (false, alternative),
                    };
                    let (anchored, alternative) = match alternative.strip_prefix('^') {
                        Some(rest) => (true, rest),
                        None => (false, alternative),
                    };
                    phrases.push(Compiled {
                        language,
                        phrase,
                        elements: compile(alternative),
                        anchored,
                        question,
                    });
                }
            }
        }
        let mut exact: HashMap<String, Vec<usize>> = HashMap::new();
        let mut classes: [Vec<usize>; 4] = Default::default();
        let mut starts: HashMap<String, Vec<usize>> = HashMap::new();
        let mut loose = Vec::new();
        for (i, c) in phrases.iter().enumerate() {
            if let Some(k) = c.elements[0].class() {
                classes[k].push(i);
                continue;
            }
            match &c.elements[0] {
                Element::Word {
                    exact: words,
                    prefixes,
                    day: false,
                    clock: false,
                    month: false,
                } if prefixes.is_empty() => {
                    for w in words {
                        exact.entry(w.clone()).or_default().push(i);
                    }
                }
                Element::Word {
                    exact: words,
                    prefixes,
                    day: false,
                    clock: false,
                    month: false,
                } if words.iter().chain(prefixes).all(|w| start(w).is_some()) => {
                    let mut keys: Vec<&str> = words
                        .iter()
                        .chain(prefixes)
                        .filter_map(|w| start(w))
                        .collect();
                    keys.sort_unstable();
                    keys.dedup();
                    for key in keys {
                        starts.entry(key.to_string()).or_default().push(i);
                    }
                }
                _ => loose.push(i),
            }
        }
        Index {
            exact,
            classes,
            starts,
            loose,
            phrases,
        }
    })
}

/// A comma between two words: a phrase may run over it, a negation may not.
pub const COMMA: u8 = 1;
/// A sentence's (or a bracket's, a dash's) end between two words: nothing runs over it.
pub const SENTENCE: u8 = 2;

/// A word of the text: its folded form, where it stands, and whether a clause ends before it.
#[derive(Debug, Clone)]
pub struct Token {
    /// Folded.
    pub word: String,
    /// Where the word it comes from starts in the text (bytes).
    pub start: usize,
    /// Where it ends.
    pub end: usize,
    /// What comes between the previous word and this: [`COMMA`] (`,`), [`SENTENCE`] (`.;:!?`,
    /// a line break, a dash, brackets), or 0.
    pub boundary: u8,
    /// A number that is part of a date written in digits ("15" and "03" of "15.03.", "3/15").
    pub date: bool,
    /// In a sentence that ends with a question mark.
    pub question: bool,
    /// What kind of word it is.
    pub class: Class,
}

/// The words of `text`, folded; English contractions are spelt out (`don't` → `do not`,
/// `I'm` → `i am`) and elisions split (`l'intérêt` → `l intéret`, both spans the whole word).
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    let mut boundary = SENTENCE;
    // Where the current sentence's words start, to mark them when it ends with `?`.
    let mut sentence = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if !c.is_alphanumeric() {
            // A dot after a number is an ordinal's or a date's ("am 7. Jänner", "03.03.", "ab
            // dem 15.03. an"), not a sentence's end, unless a new sentence follows: a line
            // break, or a capital that is not a month's ("t/m 07-08. Stuur me op 17-08").
            let ordinal = c == '.'
                && text[..start].ends_with(|p: char| p.is_ascii_digit())
                && !sentence_follows(&text[start + 1..]);
            if ordinal || c == '.' && abbreviation(&text[..start], &text[start + 1..]) {
                continue;
            }
            if matches!(
                c,
                '.' | ';' | ':' | '!' | '?' | '\n' | '(' | ')' | '—' | '–' | '¿' | '¡'
            ) {
                boundary = SENTENCE;
                if c == '?' {
                    for t in &mut out[sentence..] {
                        t.question = true;
                    }
                }
                sentence = out.len();
            } else if c == ',' {
                boundary = boundary.max(COMMA);
            }
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(i, c)) = chars.peek() {
            let apostrophe = matches!(c, '\'' | '’');
            let after = &text[i + c.len_utf8()..];
            // "4:30", "14:00": a time is one word, not a number and a sentence's end.
            let clock = c == ':'
                && (1..=2).contains(&(i - start))
                && text[start..i].bytes().all(|b| b.is_ascii_digit())
                && after.len() >= 2
                && after.as_bytes()[..2].iter().all(u8::is_ascii_digit)
                && !after.as_bytes().get(2).is_some_and(u8::is_ascii_digit);
            let joins = c.is_alphanumeric()
                || clock
                || (apostrophe && after.chars().next().is_some_and(char::is_alphanumeric));
            if !joins {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        let word = fold(&text[start..end]);
        let date = numeric_date_part(text, start, end);
        for part in expand(&word) {
            let class = Class::of(&part);
            out.push(Token {
                word: part,
                start,
                end,
                boundary,
                date,
                question: false,
                class,
            });
            boundary = 0;
        }
    }
    out
}

/// Whether the dot between `before` and `after` ends an abbreviation inside a sentence ("la
/// sett. prossima", "z.B. nächste Woche"): a known short form, then a lowercase word.
fn abbreviation(before: &str, after: &str) -> bool {
    const SHORT: &[&str] = &[
        "sett", "sig", "dott", "dr", "art", "ca", "bzw", "evtl", "ggf", "usw", "etc", "vs",
        "approx", "min", "sem", "prox", "qtr", "wk", "vlg", "nxt", "sr", "sra", "nr", "tel", "b",
        "z", "d", "h", "u", "ev",
    ];
    let word: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_alphabetic())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let next = after.trim_start_matches([' ', '\t']).chars().next();
    SHORT.contains(&fold(&word).as_str())
        && after.starts_with([' ', '\t'])
        && next.is_some_and(char::is_lowercase)
}

/// Whether what follows a number's dot starts a new sentence: a line break or the end, or a
/// capitalised word that is not a month's name, a quarter's or a noun a number counts.
fn sentence_follows(after: &str) -> bool {
    let rest = after.trim_start_matches([' ', '\t']);
    if rest.is_empty() || rest.starts_with(['\n', '\r']) {
        return true;
    }
    let word: String = rest.chars().take_while(|c| c.is_alphabetic()).collect();
    word.starts_with(char::is_uppercase)
        && crate::inbound::return_date::month_of(&fold(&word)).is_none()
        && !matches!(
            fold(&word).as_str(),
            "quartal" | "kw" | "woche" | "halbjahr" | "jahrestag" | "mai"
        )
}

/// Whether the digits at `start..end` are part of a date written in digits: "15.03.",
/// "15.04.2027", "3/15", "11-01" (not a time such as "14.30 uur" or "9-12").
fn numeric_date_part(text: &str, start: usize, end: usize) -> bool {
    let word = &text[start..end];
    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    if date_follows(&text[end..]) {
        return true;
    }
    // The second part: the number before the separator starts a date.
    let Some(rest) = text[..start].strip_suffix(['.', '/', '-']) else {
        return false;
    };
    let first = rest.trim_end_matches(|c: char| c.is_ascii_digit());
    first.len() < rest.len() && date_follows(&text[rest.len()..])
}

/// Whether `after`, the text right after a number, continues a date: "/15", ".03." or
/// ".03.2027", "-01" (a month, 1 to 12, after the dot or the dash).
fn date_follows(after: &str) -> bool {
    let Some(sep) = after
        .chars()
        .next()
        .filter(|c| matches!(c, '.' | '/' | '-'))
    else {
        return false;
    };
    let rest = &after[1..];
    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=2).contains(&n) {
        return false;
    }
    let month = rest[..n]
        .parse::<u32>()
        .is_ok_and(|m| (1..=12).contains(&m));
    let then = &rest[n..];
    match sep {
        '/' => true,
        '.' => month && then.starts_with('.'),
        _ => month && !then.starts_with(|c: char| c.is_ascii_digit()),
    }
}

/// A folded word with apostrophes as the words it stands for.
fn expand(word: &str) -> Vec<String> {
    let Some((a, b)) = word.split_once('\'') else {
        return vec![word.to_string()];
    };
    let pair = |x: &str, y: &str| vec![x.to_string(), y.to_string()];
    match (a, b) {
        ("won", "t") => pair("will", "not"),
        ("can", "t") => pair("can", "not"),
        ("shan", "t") => pair("shall", "not"),
        (a, "t") if a.ends_with('n') => pair(&a[..a.len() - 1], "not"),
        (a, "m") => pair(a, "am"),
        (a, "re") => pair(a, "are"),
        (a, "ve") => pair(a, "have"),
        (a, "ll") => pair(a, "will"),
        (a, "d") => pair(a, "would"),
        ("let", "s") => pair("let", "us"),
        (a, "s") => pair(a, "is"),
        (a, b) => pair(a, b),
    }
}

/// A phrase found in a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The table that has the phrase.
    pub language: Language,
    /// The intent it counts for (after negation).
    pub intent: Intent,
    /// The phrase's weight.
    pub weight: f64,
    /// The words as they stand in the text.
    pub text: String,
    /// The pattern that found it.
    pub pattern: &'static str,
    /// The tokens it covers, `first..end`.
    pub tokens: (usize, usize),
    /// The negator that turned it, when one did.
    pub negator: Option<usize>,
}

/// Every phrase of every table in `text` (footers' unsubscribe words excepted), counted for
/// what it means there; then what one finding makes of another: a phrase inside a longer one
/// goes ("no" inside "no longer work here", "interested" inside "not interested"), a lone
/// negator that turned
/// another phrase goes ("no" of "no es buen momento"), and the same words found by several
/// tables for one intent count once, at their highest weight (the detected language's table
/// first among equals).
pub fn find(text: &str, detected: Option<Language>) -> Vec<Found> {
    let (found, tokens) = find_all(text, detected);
    settle(found, &tokens, detected)
}

/// Every phrase of every table in `text`, before [`settle`].
fn find_all(text: &str, detected: Option<Language>) -> (Vec<Found>, Vec<Token>) {
    let tokens = tokenize(text);
    let legal = legal_lines(text);
    let footers = footer_lines(text, &legal);
    let index = index();
    let mut found = Vec::new();
    let try_phrase = |i: usize, p: usize, found: &mut Vec<Found>| {
        let compiled = &index.phrases[p];
        if compiled.anchored && i != 0 && tokens[i].boundary < SENTENCE {
            return;
        }
        if compiled.question && !tokens[i].question {
            return;
        }
        let Some((end, skipped)) = match_at(&compiled.elements, &tokens, i, true) else {
            return;
        };
        if compiled.anchored && tokens.get(end).is_some_and(|t| t.boundary == 0) {
            return;
        }
        let phrase = compiled.phrase;
        let negator = if pattern_negates(phrase.pattern) {
            // "It's not that we're not interested": the no is itself denied; the phrase it
            // holds is read on its own.
            if double_negation(&tokens, i) {
                return;
            }
            None
        } else {
            // A negator of the phrase's language or of the text's; any, when the text is too
            // short to tell ("Non mi interessa" is negated for every table's "interess*").
            let negates = |word: &str| match detected {
                Some(d) => negates(word, compiled.language) || negates(word, d),
                None => NEGATORS_BEFORE.contains(&word),
            };
            let joins = |word: &str| joins(word, detected.or(Some(compiled.language)));
            // A `pas` after a phrase is French whatever the text was taken for ("ca nous
            // interesse pas" read as Portuguese), except in Dutch, where it means "only".
            let dutch = compiled.language == Language::Nl || detected == Some(Language::Nl);
            let negates_after = |word: &str| negates(word) || (word == "pas" && !dutch);
            negator_before(&tokens, i, &negates, &joins)
                .or(skipped.filter(|&k| negates(&tokens[k].word)))
                .or_else(|| negator_after(&tokens, end, &negates_after))
                .or_else(|| french_negation(&tokens, i, end))
                .filter(|&k| !double_negation(&tokens, k))
        };
        let intent = match (negator, phrase.intent) {
            // Negated into nothing, the phrase still covers its words: "Dienstag passt nicht"
            // is not a "passt nicht" (not interested).
            (Some(_), _) => phrase.negated.unwrap_or(Intent::Other),
            // A phrase that only means something negated ("not a good time") counts for
            // nothing otherwise, but still covers the words it holds ("thanks for your
            // interest" is not an interested "interest").
            (None, Intent::Other) => Intent::Other,
            (None, intent) => intent,
        };
        // A weak unsubscribe word asked about is not a request ("¿Esto es spam?").
        let intent = if intent == Intent::Unsubscribe
            && phrase.weight < 3.0
            && tokens[i..end].iter().all(|t| t.question)
        {
            Intent::Other
        } else {
            intent
        };
        let (from, to) = (tokens[i].start, tokens[end - 1].end);
        let within = |lines: &[(usize, usize)]| lines.iter().any(|(s, e)| from >= *s && to <= *e);
        if (intent == Intent::Unsubscribe && within(&footers)) || within(&legal) {
            return;
        }
        let weight = if intent == Intent::Other {
            0.0
        } else {
            phrase.weight
        };
        found.push(Found {
            language: compiled.language,
            intent,
            weight,
            text: text[from..to].to_string(),
            pattern: phrase.pattern,
            tokens: (i, end),
            negator,
        });
    };
    for (i, token) in tokens.iter().enumerate() {
        if let Some(ps) = index.exact.get(&token.word) {
            for &p in ps {
                try_phrase(i, p, &mut found);
            }
        }
        let class = token.class;
        let kinds = [class.day, class.clock.is_some(), class.month, class.number];
        for (k, phrases) in index.classes.iter().enumerate() {
            if kinds[k] {
                for &p in phrases {
                    try_phrase(i, p, &mut found);
                }
            }
        }
        // The phrases of this word's start and the loose ones, in the tables' order (both
        // lists are ascending), as when every one of them was tried here.
        let starting: &[usize] = start(&token.word)
            .and_then(|k| index.starts.get(k))
            .map_or(&[], Vec::as_slice);
        let (mut a, mut b) = (starting.iter().peekable(), index.loose.iter().peekable());
        loop {
            let p = match (a.peek(), b.peek()) {
                (Some(&&x), Some(&&y)) if x < y => a.next(),
                (Some(_), None) => a.next(),
                (_, Some(_)) => b.next(),
                (None, None) => break,
            };
            try_phrase(i, *p.expect("peeked"), &mut found);
        }
    }
    (found, tokens)
}

/// What one finding makes of another (see [`find`]).
fn settle(found: Vec<Found>, tokens: &[Token], detected: Option<Language>) -> Vec<Found> {
    // The detected language's phrase first among equals.
    let rank = |f: &Found| (f.weight, Some(f.language) == detected);
    let inside = |a: (usize, usize), b: (usize, usize)| b.0 <= a.0 && a.1 <= b.1 && a != b;
    let negators: Vec<usize> = found.iter().filter_map(|f| f.negator).collect();
    let mut kept: Vec<Found> = Vec::new();
    for f in &found {
        let covered = found.iter().any(|g| inside(f.tokens, g.tokens));
        let spent_negator = f.tokens.1 - f.tokens.0 == 1
            && negators.contains(&f.tokens.0)
            && NEGATORS_BEFORE.contains(&tokens[f.tokens.0].word.as_str());
        if covered || spent_negator {
            continue;
        }
        let f = unspent(f, &found);
        match kept
            .iter_mut()
            .find(|k| k.intent == f.intent && k.tokens == f.tokens)
        {
            Some(k) if rank(k) >= rank(&f) => {}
            Some(k) => *k = f,
            None => kept.push(f),
        }
    }
    concede(&mut kept, tokens, detected);
    kept
}

/// A negator that belongs to a negated no found as a yes ("no objection", "wouldn't say no",
/// "sin problema") is spent there: it does not also negate a phrase after it ("no objection to a
/// demo" is no negated demo).
fn unspent(f: &Found, found: &[Found]) -> Found {
    let Some(k) = f.negator else {
        return f.clone();
    };
    let spent = found.iter().any(|g| {
        g.intent == Intent::Interested
            && g.tokens.0 <= k
            && k < g.tokens.1
            && g.tokens.1 <= f.tokens.0
    });
    let phrase = spent
        .then(|| {
            index()
                .phrases
                .iter()
                .find(|c| c.phrase.pattern == f.pattern)
        })
        .flatten();
    match phrase {
        Some(c) => Found {
            intent: c.phrase.intent,
            weight: if c.phrase.intent == Intent::Other {
                0.0
            } else {
                c.phrase.weight
            },
            negator: None,
            ..f.clone()
        },
        None => f.clone(),
    }
}

/// How much of its weight a phrase keeps when the same sentence goes on with "but" and another
/// intent's phrase.
const CONCEDED: f64 = 0.5;

/// In "X, but Y" the speaker's stance is Y: "not sure we need it, but happy to take a look" is a
/// yes, "interesting, but not a priority now" a not-now. A phrase before a contrastive
/// conjunction weighs less when another intent's phrase follows it in the same sentence; an
/// unsubscribe request does not (a request to stop stands whatever follows it).
fn concede(kept: &mut [Found], tokens: &[Token], detected: Option<Language>) {
    let sentence_end = |from: usize| {
        (from + 1..tokens.len())
            .find(|&k| tokens[k].boundary >= SENTENCE)
            .unwrap_or(tokens.len())
    };
    let conceded: Vec<usize> = (0..kept.len())
        .filter(|&a| {
            let f = &kept[a];
            if f.intent == Intent::Unsubscribe || f.weight == 0.0 || f.tokens.1 > tokens.len() {
                return false;
            }
            let mut end = sentence_end(f.tokens.1.saturating_sub(1));
            let but = match (f.tokens.1..end).find(|&k| contrasts(&tokens[k].word, detected)) {
                Some(but) => but,
                // "Very interesting. Unfortunately we just renewed…": the next sentence opens
                // with the contrast.
                None if end < tokens.len() && contrasts(&tokens[end].word, detected) => {
                    let but = end;
                    end = sentence_end(but);
                    but
                }
                None => return false,
            };
            kept.iter().any(|g| {
                g.intent != f.intent
                    && g.intent != Intent::Other
                    && g.weight > 0.0
                    && g.tokens.0 > but
                    && g.tokens.1 <= end
            })
        })
        .collect();
    for a in conceded {
        kept[a].weight *= CONCEDED;
    }
}

/// Whether `word` is "but" in `language` (`mas`, `mais` and `ma` only where they are: they are
/// "more" or a syllable elsewhere).
fn contrasts(word: &str, language: Option<Language>) -> bool {
    // Words of regret or contrast no other language spells alike ("però" folds as "pero").
    const REGRETS: &[&str] = &[
        "unfortunately",
        "however",
        "leider",
        "jedoch",
        "allerdings",
        "malheureusement",
        "toutefois",
        "cependant",
        "lamentablemente",
        "desafortunadamente",
        "infelizmente",
        "contudo",
        "porem",
        "helaas",
        "echter",
        "purtroppo",
        "tuttavia",
        "pero",
    ];
    if REGRETS.contains(&word) {
        return true;
    }
    match language {
        Some(Language::En) => word == "but",
        Some(Language::De) => word == "aber",
        Some(Language::Fr) => word == "mais",
        Some(Language::Es) => word == "pero",
        Some(Language::Pt) => word == "mas",
        Some(Language::Nl) => word == "maar",
        Some(Language::It) => word == "ma",
        None => matches!(word, "but" | "aber" | "pero" | "maar"),
    }
}

/// Whether the pattern itself says the negation (its first word is a negator).
fn pattern_negates(pattern: &str) -> bool {
    pattern.split_whitespace().next().is_some_and(|w| {
        w.split('|')
            .any(|a| NEGATORS_BEFORE.contains(&a.trim_end_matches('*')))
    })
}

/// The end (exclusive) of a match of `elements` starting at token `i`, and the first negator a
/// gap skipped ("Tuesday does**n't** work"); every word after the first stays in the first
/// one's clause.
fn match_at(
    elements: &[Element],
    tokens: &[Token],
    i: usize,
    first: bool,
) -> Option<(usize, Option<usize>)> {
    let Some((element, rest)) = elements.split_first() else {
        return Some((i, None));
    };
    match element {
        Element::Gap => {
            for skip in 0..=2 {
                let at = i + skip;
                if at > tokens.len() || (i..at).any(|k| tokens[k].boundary > 0) {
                    break;
                }
                if let Some((end, negator)) = match_at(rest, tokens, at, false) {
                    let skipped =
                        (i..at).find(|&k| NEGATORS_BEFORE.contains(&tokens[k].word.as_str()));
                    return Some((end, skipped.or(negator)));
                }
            }
            None
        }
        element => {
            let token = tokens.get(i)?;
            if (!first && token.boundary >= SENTENCE) || !element.matches(token) {
                return None;
            }
            if let Element::Word {
                exact,
                prefixes,
                day,
                clock,
                month,
            } = element
            {
                if !(*day || *clock || *month) {
                    return match_at(rest, tokens, i + 1, false);
                }
                let word = token.word.as_str();
                let class = token.class;
                let literal = exact.iter().any(|w| w == word)
                    || prefixes.iter().any(|p| word.starts_with(p.as_str()));
                let next = |k: usize| {
                    tokens
                        .get(i + k)
                        .filter(|t| t.boundary < SENTENCE)
                        .map_or("", |t| t.word.as_str())
                };
                // A bare number is a time unless it is part of a date in digits or the next
                // word makes it a count or a date ("15.03.", "2 weeks", "15 April").
                let count = *clock && class.clock == Some(false) && (token.date || counts(next(1)));
                // A weekday with a date is that date, not a day close at hand ("dinsdag 19
                // mei", "Monday, March 3").
                let dated = *day && class.day && dated_day(next(1), next(2));
                // "May", "mar", "mai", "jan" are words too: a month only next to a day.
                let short_month = *month
                    && !class.day
                    && class.clock.is_none()
                    && (word.len() < 4 || word == "may")
                    && !(is_day_number(next(1))
                        || i > 0 && is_day_number(tokens[i - 1].word.as_str()));
                if !literal && (count || dated || short_month) {
                    return None;
                }
            }
            match_at(rest, tokens, i + 1, false)
        }
    }
}

/// A negator among the four words before `i`, in the same clause: its position ("não é algo
/// que faça sentido"). A conjunction starts another clause: "geen interesse en mail me niet
/// meer" does not negate the mail.
fn negator_before(
    tokens: &[Token],
    i: usize,
    negates: &dyn Fn(&str) -> bool,
    joins: &dyn Fn(&str) -> bool,
) -> Option<usize> {
    let mut j = i;
    for _ in 0..4 {
        if j == 0 || tokens[j].boundary > 0 {
            return None;
        }
        j -= 1;
        let word = tokens[j].word.as_str();
        if negates(word) {
            return Some(j);
        }
        if joins(word) {
            return None;
        }
    }
    None
}

/// Whether `word` is "and" or "but" in `language` (not the Portuguese and Italian `e`, which
/// folds like "é" and "è"; `mais` is "but" in French and "more" in Portuguese, `en` "and" in
/// Dutch and "in" in French and Spanish).
fn joins(word: &str, language: Option<Language>) -> bool {
    let words: &[&str] = match language {
        Some(Language::En) => &["and", "but"],
        Some(Language::De) => &["und", "aber"],
        Some(Language::Fr) => &["et", "mais"],
        Some(Language::Es) => &["y", "pero"],
        Some(Language::Pt) => &["mas"],
        Some(Language::Nl) => &["en", "maar"],
        Some(Language::It) => &["ed", "ma"],
        None => &[
            "and", "but", "und", "aber", "et", "y", "pero", "maar", "ed", "ma",
        ],
    };
    words.contains(&word)
}

/// `nicht`, `niet`, `pas`, `not` in the two words after `end`, in the same clause, or after
/// words that only soften or stress it ("das interessiert uns **leider überhaupt** nicht", "dat
/// interesseert ons **helaas echt** niet").
fn negator_after(tokens: &[Token], end: usize, negates: &dyn Fn(&str) -> bool) -> Option<usize> {
    for (k, t) in tokens.iter().enumerate().skip(end).take(5) {
        if t.boundary > 0 {
            return None;
        }
        // "ça m'intéresse pas mal": "pas mal" is "quite", not a negation.
        let pas_mal = t.word == "pas" && tokens.get(k + 1).is_some_and(|n| n.word == "mal");
        if NEGATORS_AFTER.contains(&t.word.as_str()) && negates(&t.word) && !pas_mal {
            return Some(k);
        }
        if k > end
            && !tokens[end..=k]
                .iter()
                .all(|t| FILLERS_AFTER.contains(&t.word.as_str()))
        {
            return None;
        }
    }
    None
}

/// "ne … pas" around a phrase is French whatever language the reply was taken for ("Merci mais
/// ça ne nous intéresse pas" read as Portuguese): the `ne` in the three words before it, with
/// `pas`, `plus`, `jamais` or `rien` right after it.
fn french_negation(tokens: &[Token], i: usize, end: usize) -> Option<usize> {
    let after = tokens.get(end).is_some_and(|t| {
        t.boundary == 0 && matches!(t.word.as_str(), "pas" | "plus" | "jamais" | "rien")
    }) && !tokens
        .get(end + 1)
        .is_some_and(|t| t.word == "mal" && t.boundary == 0);
    if !after {
        return None;
    }
    (i.saturating_sub(3)..i)
        .rev()
        .take_while(|&k| tokens[k + 1].boundary == 0)
        .find(|&k| matches!(tokens[k].word.as_str(), "ne" | "n"))
}

/// Whether the negator at `k` is itself denied: "no es que no nos interese", "não é que não
/// tenha interesse", "non è che non mi interessi", "it's not that we're not interested", "nicht
/// dass es uns nicht interessiert" — a yes said twice over; so is a denied saying of it: "I
/// wouldn't say we're not interested", "ich würde nicht sagen, dass wir kein Interesse haben",
/// "je ne dirais pas qu'on n'est pas intéressés".
fn double_negation(tokens: &[Token], k: usize) -> bool {
    let negated_before = |j: usize| {
        (j.saturating_sub(2)..j)
            .filter(|&n| (n + 1..=j).all(|m| tokens[m].boundary == 0))
            .any(|n| NEGATORS_BEFORE.contains(&tokens[n].word.as_str()))
    };
    let that = (k.saturating_sub(4)..k)
        .rev()
        .take_while(|&j| tokens[j + 1].boundary == 0)
        .find(|&j| {
            THAT.contains(&tokens[j].word.as_str()) || SAY.contains(&tokens[j].word.as_str())
        });
    that.is_some_and(|j| {
        if SAY.contains(&tokens[j].word.as_str()) {
            return negated_before(j);
        }
        // "sagen, dass": the saying verb may stand before the comma.
        let said = j > 0
            && tokens[j].boundary < SENTENCE
            && SAY.contains(&tokens[j - 1].word.as_str())
            && negated_before(j - 1);
        said || tokens[j].boundary == 0 && negated_before(j)
    })
}

/// "That" in the seven languages: what a denied negation is said through.
const THAT: &[&str] = &["que", "qu", "che", "that", "dass", "dat"];

/// Verbs of saying that a negation can deny ("I wouldn't say …").
const SAY: &[&str] = &[
    "say",
    "saying",
    "sagen",
    "behaupten",
    "dire",
    "dirais",
    "dirait",
    "dirions",
    "decir",
    "diria",
    "dizer",
    "zeggen",
    "direi",
    "direbbe",
];

/// Words between a verb and the negation after it that leave the negation where it is.
const FILLERS_AFTER: &[&str] = &[
    "leider",
    "uberhaupt",
    "gar",
    "wirklich",
    "absolut",
    "echt",
    "eigentlich",
    "auch",
    "mich",
    "uns",
    "mir",
    "ihnen",
    "dich",
    "euch",
    "helaas",
    "helemaal",
    "totaal",
    "ons",
    "mij",
    "me",
    "ook",
    "eigenlijk",
    "vraiment",
    "absolument",
    "really",
];

/// `text` without its footer lines ([`footer_lines`]): what the learned second opinion reads,
/// so a newsletter's or a legal notice's words below a reply never move it.
pub(crate) fn without_footers(text: &str) -> String {
    let footers = footer_lines(text, &legal_lines(text));
    let mut out = String::with_capacity(text.len());
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let end = start + line.len();
        if !footers.contains(&(start, end)) {
            out.push_str(line);
        }
        start = end;
    }
    out
}

/// The byte ranges of the lines of a legal notice: a line that says its message is confidential
/// and speaks of whom it was meant for or of receiving it in error ("If you are not the intended
/// recipient…", "Se você … a recebeu por engano…"). None of their words are the person's: not
/// the "engano" of a wrong person, not the "ne plus recevoir" of an opt-out.
fn legal_lines(text: &str) -> Vec<(usize, usize)> {
    use aho_corasick::AhoCorasick;
    // Matched without regard to ASCII case; accented forms listed as written.
    const SECRET: &[&str] = &[
        "confidential",
        "privileged",
        "vertraulich",
        "confidentiel",
        "confidencial",
        "vertrouwelijk",
        "riservat",
        "confidenzial",
    ];
    const MEANT_FOR: &[&str] = &[
        "recipient",
        "addressee",
        "in error",
        "adressat",
        "empfänger",
        "empfanger",
        "irrtümlich",
        "irrtumlich",
        "destinataire",
        "par erreur",
        "destinatario",
        "destinatário",
        "por error",
        "por engano",
        "geadresseerde",
        "abusievelijk",
        "per errore",
        "mittente",
    ];
    static WORDS: OnceLock<AhoCorasick> = OnceLock::new();
    let words = WORDS.get_or_init(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(SECRET.iter().chain(MEANT_FOR))
            .expect("fixed words build")
    });
    // Each line with both kinds of word, found in one pass over the text.
    let line_of = |at: usize| {
        let start = text[..at].rfind('\n').map_or(0, |k| k + 1);
        let end = text[at..].find('\n').map_or(text.len(), |k| at + k + 1);
        (start, end)
    };
    let mut secret: Vec<(usize, usize)> = Vec::new();
    let mut meant: Vec<(usize, usize)> = Vec::new();
    for m in words.find_iter(text) {
        let line = line_of(m.start());
        let kind = if m.pattern().as_usize() < SECRET.len() {
            &mut secret
        } else {
            &mut meant
        };
        if !kind.contains(&line) {
            kind.push(line);
        }
    }
    secret.retain(|line| meant.contains(line));
    secret
}

/// Words of a footer line: a link, "click", a newsletter's or an unsubscribe notice's words.
const FOOTER_CUES: &[&str] = &[
    "http",
    "www.",
    "click",
    "klick",
    "cliqu",
    "clic",
    "haga clic",
    "clique",
    "klik",
    "clicca",
    "newsletter",
    "link",
    "footer",
    "lien",
    "enlace",
    "ligacao",
    "collegamento",
    "preferences",
    "einstellungen",
    "this email",
    "this message",
    "diese e-mail",
    "diese nachricht",
    "ce message",
    "ce courriel",
    "este correo",
    "este mensaje",
    "este e-mail",
    "deze e-mail",
    "dit bericht",
    "questa email",
    "questo messaggio",
    "if you no longer wish",
    "wenn sie keine",
    "si vous ne souhaitez plus",
    "si no desea",
    "si no quieres",
    "si no quiere ",
    "responde baja",
    "responda baja",
    "se nao deseja",
    "se não deseja",
    "als u geen",
    "se non desidera",
    "reply stop",
    "responda stop",
    "antworten sie mit stop",
];
/// Cues that also come up in what a person writes; the others (a link, "click") do not.
const WEAK_FOOTER_CUES: &[&str] = &[
    "newsletter",
    "this email",
    "this message",
    "diese e-mail",
    "si no quieres",
    "si no quiere ",
];

/// Words of a line the person writes about themselves ("auch Newsletter will ich keine
/// mehr"): a footer speaks to the reader ("you are receiving", "Sie erhalten").
const FIRST_PERSON: &[&str] = &[
    "i", "me", "my", "ich", "mich", "mir", "je", "j", "moi", "yo", "eu", "ik", "mij", "io",
];

/// The byte ranges of lines that are a footer's: a link, "click", a newsletter's or a legal
/// notice's words (`legal`, the lines [`legal_lines`] found). Their unsubscribe words are the
/// sender's boilerplate, not the person's.
fn footer_lines(text: &str, legal: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // Every cue in one pass over a line (this runs for every line of every reply, and again
    // when the learned second opinion reads it), overlapping matches included, so each cue a
    // line holds is seen.
    static FIND: OnceLock<aho_corasick::AhoCorasick> = OnceLock::new();
    let find =
        FIND.get_or_init(|| aho_corasick::AhoCorasick::new(FOOTER_CUES).expect("fixed cues build"));
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let folded = line.to_lowercase().replace("linkedin", "");
        let own = || {
            tokenize(line)
                .iter()
                .any(|t| FIRST_PERSON.contains(&t.word.as_str()))
        };
        let (mut any, mut strong) = (false, false);
        for m in find.find_overlapping_iter(&folded) {
            any = true;
            if !WEAK_FOOTER_CUES.contains(&FOOTER_CUES[m.pattern().as_usize()]) {
                strong = true;
                break;
            }
        }
        if strong || (any && !own()) {
            out.push((start, start + line.len()));
        }
        start += line.len();
    }
    for line in legal {
        if !out.contains(line) {
            out.push(*line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbound::intent::{classify, Reply};

    /// The footer lines found by the cue automaton are the ones a substring search for each
    /// cue finds, on every line of every reply the crate compiles in (and on lines made to hold
    /// overlapping and weak-only cues).
    #[test]
    fn footer_cues_are_found_as_a_search_for_each_cue_finds_them() {
        let naive = |text: &str| -> Vec<(usize, usize)> {
            let mut out = Vec::new();
            let mut start = 0;
            for line in text.split_inclusive('\n') {
                let folded = line.to_lowercase().replace("linkedin", "");
                let own = tokenize(line)
                    .iter()
                    .any(|t| FIRST_PERSON.contains(&t.word.as_str()));
                let strong = FOOTER_CUES
                    .iter()
                    .any(|c| !WEAK_FOOTER_CUES.contains(c) && folded.contains(c));
                if strong || (FOOTER_CUES.iter().any(|c| folded.contains(c)) && !own) {
                    out.push((start, start + line.len()));
                }
                start += line.len();
            }
            out
        };
        let mut texts: Vec<String> = vec![
            "Click here: this email link\nI read this email twice\nnewsletter\n".into(),
            "si no quieres recibir\nthis message was sent to you\nhaga clic aquí\n".into(),
        ];
        for (_, part) in crate::inbound::intent::learned::TRAINING_PARTS {
            for line in part.lines().filter(|l| !l.trim().is_empty()) {
                let row: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                texts.push(row["text"].as_str().unwrap_or_default().to_string());
            }
        }
        assert!(texts.len() > 1_000, "the corpus is read: {}", texts.len());
        let mut with_footer = 0;
        for text in &texts {
            let found = footer_lines(text, &[]);
            with_footer += usize::from(!found.is_empty());
            assert_eq!(found, naive(text), "{text:?}");
        }
        assert!(
            with_footer > 10,
            "some replies have footer lines: {with_footer}"
        );
    }

    /// Every phrase is found in its example, and its example classifies as its intent (unless
    /// the phrase is too weak to decide alone): the tables test themselves.
    #[test]
    fn every_phrase_finds_its_example_and_the_example_classifies_as_its_intent() {
        let mut failures = Vec::new();
        for language in Language::ALL {
            for phrase in phrases(language) {
                let (found, _) = find_all(phrase.example, None);
                if !found.iter().any(|f| f.pattern == phrase.pattern) {
                    failures.push(format!(
                        "{}: `{}` not found in {:?}",
                        language.code(),
                        phrase.pattern,
                        phrase.example
                    ));
                    continue;
                }
                // A phrase too weak to decide alone only supports others.
                if phrase.weight < crate::inbound::intent::MIN_SCORE {
                    continue;
                }
                let got = classify(&Reply {
                    text: phrase.example,
                    ..Default::default()
                });
                // A phrase that counts only negated is shown negated; one that only covers
                // words ("thanks for your interest") leaves its example `other`.
                let want = match phrase.intent {
                    Intent::Other => phrase.negated.unwrap_or(Intent::Other),
                    intent => intent,
                };
                if got.intent != want {
                    failures.push(format!(
                        "{}: {:?} is {} (want {}), evidence {:?}",
                        language.code(),
                        phrase.example,
                        got.intent,
                        want,
                        got.evidence
                    ));
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} failures:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    #[test]
    fn contractions_and_elisions_are_words() {
        let words: Vec<String> = tokenize("I don't think we're ready; l'intérêt")
            .into_iter()
            .map(|t| t.word)
            .collect();
        assert_eq!(
            words,
            ["i", "do", "not", "think", "we", "are", "ready", "l", "interet"]
        );
    }

    /// Each text classifies as its intent.
    fn assert_reads(cases: &[(&str, Intent)]) {
        for (text, want) in cases {
            let got = classify(&Reply {
                text,
                ..Default::default()
            });
            assert_eq!(got.intent, *want, "{text}: {got:?}");
        }
    }

    #[test]
    fn negation_changes_what_a_phrase_counts_for() {
        let cases: &[(&str, Intent)] = &[
            ("I'm interested", Intent::Interested),
            ("I'm not interested", Intent::NotInterested),
            ("Das interessiert uns nicht", Intent::NotInterested),
            ("Ça ne m'intéresse pas", Intent::NotInterested),
            // Québécois without `ne`, short enough to be taken for Portuguese.
            (
                "merci mais ca nous interesse pas pantoute",
                Intent::NotInterested,
            ),
            ("No me interesa", Intent::NotInterested),
            ("Please don't call me again", Intent::Unsubscribe),
            ("No, I'm interested", Intent::Interested),
            // A negated no is a yes, in every language.
            ("No objection to a quick call.", Intent::Interested),
            ("I wouldn't say no to a demo.", Intent::Interested),
            ("Je ne dirais pas non à une démo.", Intent::Interested),
            ("Geen bezwaar tegen een gesprek.", Intent::Interested),
            (
                "We're not happy with our current vendor.",
                Intent::Interested,
            ),
            // Still a no, or still a request to stop.
            ("No thanks.", Intent::NotInterested),
            ("Ce n'est pas pour nous par contre.", Intent::NotInterested),
            (
                "Ik maak bezwaar tegen de verwerking van mijn gegevens.",
                Intent::Unsubscribe,
            ),
            (
                "No thanks, and I never signed up for this.",
                Intent::Unsubscribe,
            ),
            // "No problem" alone says nothing.
            ("No problem.", Intent::Other),
            ("Kein Problem, die Mail habe ich gelöscht.", Intent::Other),
        ];
        assert_reads(cases);
    }

    /// A no that also asks to stop writing is a request to stop, however many ways the no is
    /// said; a stop bound to this one offer, or a "no need to remove me", stays a no.
    #[test]
    fn a_stop_outweighs_a_no_unless_it_is_bound_to_this_offer() {
        let cases: &[(&str, Intent)] = &[
            (
                "Kein Interesse – und bitte überhaupt keine Mails mehr, weder zu diesem noch \
                 zu irgendeinem anderen Thema.",
                Intent::Unsubscribe,
            ),
            (
                "Not interested, we already have a vendor, no need. Stop emailing me.",
                Intent::Unsubscribe,
            ),
            ("Kein Interesse, danke.", Intent::NotInterested),
            (
                "Valeu, mas não é pra gente. Pode parar de me mandar coisa sobre esse produto.",
                Intent::NotInterested,
            ),
            (
                "Over dit product hoef je me niet meer te mailen, het is niks voor ons.",
                Intent::NotInterested,
            ),
            (
                "No hace falta que me borres de la lista, pero esto no es para nosotros.",
                Intent::NotInterested,
            ),
        ];
        assert_reads(cases);
    }

    /// Phrases that point elsewhere or ask to stop only in their own sense: "I don't know who
    /// you are" names no one to ask, "get off the ground" is no list, "vanaf Utrecht" is a
    /// way, and a call refused for a time is no opt-out while one refused again is.
    #[test]
    fn narrow_phrases_keep_to_their_sense() {
        let not = |text: &str, intent: Intent| {
            let got = classify(&Reply {
                text,
                ..Default::default()
            });
            assert_ne!(got.intent, intent, "{text}: {got:?}");
        };
        not("I don't know who you are.", Intent::WrongPerson);
        not("Non so chi sia lei.", Intent::WrongPerson);
        not(
            "How do we get off the ground with this? Send me the pricing.",
            Intent::Unsubscribe,
        );
        not(
            "Hoe kom ik vanaf Utrecht bij jullie kantoor?",
            Intent::Unsubscribe,
        );
        not(
            "Send me the deck, but don't call me before 10.",
            Intent::Unsubscribe,
        );
        assert_reads(&[(
            "Don't call me again, after this I'm done.",
            Intent::Unsubscribe,
        )]);
    }

    /// In "X, but Y" the stance is Y.
    #[test]
    fn what_follows_but_outweighs_what_it_concedes() {
        let cases: &[(&str, Intent)] = &[
            (
                "Not sure we need it, but happy to take a look.",
                Intent::Interested,
            ),
            ("Interessant, maar nu geen prioriteit.", Intent::NotNow),
            (
                "Sounds interesting, but we're happy with our current vendor.",
                Intent::NotInterested,
            ),
            // A request to stop stands whatever follows it.
            (
                "Please stop emailing me, but good luck with the product.",
                Intent::Unsubscribe,
            ),
            // The contrast may open the next sentence.
            (
                "Looks genuinely interesting. Unfortunately we renewed with Callwise for another three years.",
                Intent::NotInterested,
            ),
            (
                "Molto interessante, e la demo è fatta bene. Però abbiamo appena rinnovato per tre anni.",
                Intent::NotInterested,
            ),
        ];
        assert_reads(cases);
    }

    /// A legal notice under a reply (confidential, meant for its addressee) holds words of
    /// every intent: none of them are the person's.
    #[test]
    fn a_legal_notice_says_nothing_of_the_person() {
        let cases: &[(&str, Intent)] = &[
            (
                "Podemos conversar na terça às 15h?\n\nFernando Dias\n\nEsta mensagem pode conter informação confidencial. Se você não for o destinatário ou a recebeu por engano, avise o remetente. Para não receber mais nossos comunicados, clique em descadastrar.",
                Intent::Interested,
            ),
            (
                "Non, pas pour le moment. On en reparlera quand la nouvelle direction sera en place.\n\nOlivier Mercier\n\nLe présent message est confidentiel. Si vous n'en êtes pas le destinataire, veuillez le détruire. Pour ne plus recevoir nos informations, écrivez à desinscription@mercier.example.",
                Intent::NotNow,
            ),
            (
                "Please send the pricing.\n\nThis email is confidential. If you are not the intended recipient, please delete it. You are not the right person to read it.",
                Intent::Interested,
            ),
            // A person who writes "confidential" about their own request is still read.
            (
                "Please keep this confidential, and remove me from your list.",
                Intent::Unsubscribe,
            ),
        ];
        assert_reads(cases);
    }

    /// Words that refuse only when negated: "contact me again on 2 September" asks to be
    /// written to, "we need a solution hosted here" is no refusal; negated, both still are.
    #[test]
    fn some_words_refuse_only_when_negated() {
        let cases: &[(&str, Intent)] = &[
            (
                "We're closed for the summer break - please contact me again on 2 September.",
                Intent::NotNow,
            ),
            ("Don't contact me again.", Intent::Unsubscribe),
            ("We don't need this.", Intent::NotInterested),
            (
                "Somos fornecedores do Exército e precisamos de uma solução com hospedagem no Brasil. Gostaríamos de receber material técnico.",
                Intent::Interested,
            ),
            ("Não precisamos.", Intent::NotInterested),
        ];
        assert_reads(cases);
    }

    /// A question that names a day and a time of day proposes a meeting, whatever month it
    /// names.
    #[test]
    fn a_question_with_a_time_proposes_a_meeting() {
        let cases: &[(&str, Intent)] = &[
            (
                "Bonjour Julien, oui volontiers. Le 3 décembre à 14 h, c'est possible de votre côté ?",
                Intent::Interested,
            ),
            (
                "Olá! Pode ser no dia 2 de dezembro às 15h? Vou reunir a equipa.",
                Intent::Interested,
            ),
            (
                "Doctora Ríos, con mucho gusto. ¿Podemos reunirnos el 22 de octubre?",
                Intent::Interested,
            ),
            // A statement naming a month is still a deferral.
            ("Reach out again in December.", Intent::NotNow),
        ];
        assert_reads(cases);
    }

    /// Praise of the sender's interest in someone else's words is not the replier's own yes.
    #[test]
    fn someone_elses_interest_is_not_a_yes() {
        let cases: &[(&str, Intent)] = &[
            (
                "Mein Chef fragt, ob Sie ihn angerufen haben. Er meinte, Sie wären an einer Kooperation interessiert?",
                Intent::Other,
            ),
            (
                "Scusi, ma nella sua mail scrive che siete interessati al bando regionale. Quale bando?",
                Intent::Other,
            ),
            (
                "Oiga, mi socio dice que ustedes estaban interesados en comprar nuestro local. ¿Es así?",
                Intent::Other,
            ),
            // The replier's own interest still counts.
            ("Wir wären an einer Kooperation interessiert.", Intent::Interested),
        ];
        assert_reads(cases);
    }

    #[test]
    fn a_footers_unsubscribe_is_not_the_persons() {
        let text = "Sounds great, can we talk Thursday?\nTo unsubscribe from our newsletter, click here: https://acme.com/u";
        let got = classify(&Reply {
            text,
            ..Default::default()
        });
        assert_eq!(got.intent, Intent::Interested, "{got:?}");
    }
}
