"""Look-alikes of the ASCII letters, digits and `( ) :` (UTS #39 confusables), for the skeleton of author text.

Generated once from Unicode's `confusables.txt` (UTS #39, as shipped in the PyPI package `confusable-homoglyphs`
3.3.1, file `confusables.json`) and committed: for each ASCII target, every single code point listed as
confusable with it, less those NFKC already maps to something else (NFKC runs before the fold, so they never
reach it). `i`, `I`, `l`, `1` and `|` share one prototype (`l`), as `o`, `O` and `0` share `o`: UTS #39 maps
`I` and `1` to `l` and `0` to `O`, and folding more than it does only defuses more. Recipe, for a refresh:

    for target, proto in classes:                       # a-z, A-Z folded to lower case; the shared classes above
        for entry in confusables_json[target]:
            ch = entry["c"]
            if len(ch) == 1 and not ch.isascii() and unicodedata.normalize("NFKC", ch) == ch:
                FOLD[proto] += ch
"""

from __future__ import annotations

FOLD = {
    "(": "\u2768\u2772\u3014\ufd3e",
    ")": "\u2769\u2773\u3015\ufd3f",
    ":": "ː\u02f8\u0589\u0903\u0a83\u16ec\u1803\u1809\u205a\u2236ꓽ\ua789",
    "a": "ɑΑαАаᎪᗅ\u237aꓮ\U000102a0\U00016f40",
    "b": "ƄΒВЬᏏᏴᑲᖯᗷꓐꞴ\U00010282\U000102a1\U00010301",
    "c": "СсᏟᴄⲤⲥꓚꮯ\U000102a2\U00010302\U00010415\U0001043d\U0001051c\U000118e9\U000118f2\U0001f74c",
    "d": "ԁᎠᏧᑯᗞᗪꓒꓓ",
    "e": "ΕЕеҽᎬ\u212e\u22ffⴹꓰꬲ\U00010286\U000118a6\U000118ae",
    "f": "ϜքᖴẝꓝꞘꞙꬵ\U00010287\U000102a5\U00010525\U000118a2\U000118c2\U0001d213",
    "g": "ƍɡԌցᏀᏳᶃꓖ",
    "h": "ΗНһհᎻᏂᕼⲎꓧ\U000102cf",
    "j": "ͿϳЈјᎫᒍꓙꞲ",
    "k": "ΚКᏦᛕⲔꓗ\U00010518",
    "l": "ıƖǀɩɪΙιІіӀӏ۱ᎥᏞᒪᛁ\u2223\u2373\u23fdⲒⳐⵏꓡꓲꙇꭵ\U0001028a\U00010309\U00010320"
    "\U0001041b\U00010526\U000118a3\U000118b2\U000118c3\U00016f16\U00016f28\U0001d22a",
    "m": "ΜϺМᎷᗰᛖⲘꓟ\U000102b0\U00010311",
    "n": "ΝոռⲚꓠ\U00010513",
    "o": "ΟοσОоՕօ۵०০੦૦ଠ୦௦\u0c02౦\u0c82೦\u0d02ഠ൦\u0d82๐໐ဝ၀ჿዐᴏᴑⲞⲟⵔ"
    "\u3007ꓳꬽ\U00010292\U000102ab\U00010404\U0001042c\U000104c2\U000104ea"
    "\U00010516\U000114d0\U000118b5\U000118c8\U000118d7\U000118e0",
    "p": "ΡρРрᏢᑭ\u2374Ⲣⲣꓑ\U00010295",
    "q": "ԛգզⵕ",
    "r": "ƦгᎡᏒᖇᴦⲅꓣꭇꭈꮁ\U000104b4\U00016f35\U0001d216",
    "s": "ƽЅѕՏᏕᏚꓢꜱꮪ\U00010296\U00010420\U00010448\U000118c1\U00016f3a",
    "t": "ΤТᎢ\u22a4\u27d9Ⲧꓔ\U00010297\U000102b1\U00010315\U000118bc\U00016f0a\U0001f768",
    "u": "ʋυՍսሀᑌᴜ\u222a\u22c3ꓴꞟꭎꭒ\U000104ce\U000104f6\U000118b8\U000118d8\U00016f42",
    "v": "νѴѵ۷Ꮩᐯᴠ\u2228\u22c1ⴸꓦꛟꮩ\U0001051d\U00011706\U000118a0\U000118c0\U00016f08\U0001d20d",
    "w": "ɯѡԜԝաᎳᏔᴡꓪꮃ\U0001170a\U0001170e\U0001170f\U000118e6\U000118ef",
    "x": "\u00d7ΧХхᕁᕽ\u166d\u166eᚷ\u2573\u292b\u292c\u2a2fⲬⵝꓫꞳ\U00010290\U000102b4\U00010317\U00010322"
    "\U00010527\U000118ec",
    "y": "ɣʏΥγУуҮүყᎩᎽᶌỿⲨꓬꭚ\U000102b2\U000118a4\U000118dc\U00016f43",
    "z": "ΖᏃᴢꓜꮓ\U000102f5\U000118a9\U000118c4\U000118e5",
}
"""Prototype → the code points that look like it (391 in all)."""
