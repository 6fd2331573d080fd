"""Citations Jarvis attributes to an uncited answer land at the end of a
sentence, never inside a number, a file name or a version (a real model's
"91.3%" came out as "91 [3].3%", and "Prof. Sharma" as "Prof [3]. Sharma")."""

from apps.chats.attribution import attribute

PASSAGE = "PixelNet reached 91.3% test accuracy on CIFAR-10 in the September handover (v2.1)."


def test_a_decimal_point_is_not_the_end_of_a_sentence():
    text, added = attribute("PixelNet reached 91.3% test accuracy on CIFAR-10.", {3: PASSAGE})
    assert text == "PixelNet reached 91.3% test accuracy on CIFAR-10 [3]." and added == [3]


def test_file_names_and_versions_stay_whole_and_each_sentence_gets_its_own():
    passages = {1: PASSAGE, 2: "The handover notes live in pixelnet_handover.md with the code."}
    text, added = attribute(
        "Version v2.1 of PixelNet reached 91.3% test accuracy. "
        "The handover notes live in pixelnet_handover.md!",
        passages,
    )
    assert text == (
        "Version v2.1 of PixelNet reached 91.3% test accuracy [1]. "
        "The handover notes live in pixelnet_handover.md [2]!"
    )
    assert added == [1, 2]


def test_a_title_or_an_initial_does_not_end_a_sentence():
    passages = {
        3: "QubitML is Prof. Sharma's quantum machine learning research project.",
        4: "Dr. J. Rao reviews the thesis drafts every month.",
    }
    text, added = attribute(
        "Arjun works with Prof. Sharma on the QubitML research project. "
        "Dr. J. Rao reviews the thesis drafts.",
        passages,
    )
    assert text == (
        "Arjun works with Prof. Sharma on the QubitML research project [3]. "
        "Dr. J. Rao reviews the thesis drafts [4]."
    )
    assert added == [3, 4]


def test_a_sentence_that_repeats_no_passage_gets_nothing():
    assert attribute("I am not sure about that.", {1: PASSAGE}) == ("I am not sure about that.", [])
