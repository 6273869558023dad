#include "tokenizer/training_text.h"

namespace genai {

std::string_view synthetic_training_text() {
  static constexpr std::string_view kText = R"(The river starts high in the hills, where the snow melts slowly in the spring. It runs through
the small town, past the old mill and the school, and then out into the open fields. In the summer
the children swim in it, and in the winter it freezes at the edges. People who live here say that
the river is older than the town, older than the roads, and that it will still be here when the
last house has fallen down.

Every morning the baker opens his shop at six o'clock. He has done this for thirty-two years. The
bread is warm and the coffee is strong, and the first customers are always the same: the farmer
with the red truck, the teacher who walks her dog, and the young man who works at the station. They
talk about the weather, the price of milk, and the news from the city. Nobody is in a hurry.

A computer is a machine that follows instructions. It reads a number, changes it, and writes it
back, millions of times every second. What makes it useful is not that each step is clever, but
that there are so many steps and none of them are ever forgotten. A program is a list of such
steps, written by a person who wanted the machine to do something for them. When the program is
wrong, the machine does the wrong thing very quickly and very reliably.

Language models learn to predict the next word in a sentence. They read a great deal of text and
adjust their numbers until their guesses become good. A model does not know what a river is, or
why the baker gets up early; it only knows which words tend to follow which other words. Still,
the results can be surprising, and sometimes they are even helpful.

"Where are you going?" she asked. "To the market," he said, "and then home. I'll be back before
dinner." She nodded and went back to her book. It was a long story about a ship that sailed
around the world in 1872, carrying tea, silk, and letters. The captain wrote in his diary every
night: the wind, the stars, the sea, and the names of the men who were sick.

We should remember that small things matter. A kind word, a door held open, a question answered
with patience: these are the things that make a day better. They cost nothing and they are not
hard to do, but they are easy to forget when we are tired or busy. It's worth trying anyway.

The recipe is simple. Take 2 cups of flour, 1 cup of water, a spoon of salt and a little yeast.
Mix them together, knead the dough for ten minutes, and let it rest in a warm place for an hour.
Then shape it, bake it at 220 degrees for 35 minutes, and let it cool before you cut it. You'll
find that the house smells wonderful, and that the bread is gone by the evening.

In the evening the lights come on one by one along the street. The wind gets colder and the birds
go quiet. Somewhere a radio is playing an old song, and a man is singing along, not very well but
with great feeling. The day is over, and tomorrow there will be another one, very much like this
one, and that is not a bad thing at all.

The station is small, with two platforms and a clock that is always four minutes slow. Trains come
through three times a day in each direction. On Sundays there are only two, and the waiting room is
closed, so people stand outside and talk while they wait. The station master knows everyone by name
and he remembers which of them take sugar in their tea.

When you learn something new, it helps to write it down in your own words. Reading a page again and
again is not the same as understanding it. Try to explain the idea to a friend, or to yourself, out
loud. If you cannot explain it simply, you have found the part that you still need to study. That
is not a failure; it is exactly the information you were looking for.

The garden behind the house was planted by her grandmother many years ago. There are apple trees,
a row of tall sunflowers, beans that climb up wooden poles, and a small pond where frogs sing in the
evening. Every autumn the family picks the apples together and makes juice, jam and pies. Whatever
is left over is given to the neighbours, who give back eggs, honey and stories.

Good software is tested. Each function should do one thing, and there should be a test that shows
it does that thing correctly, including the strange cases: the empty list, the very long string,
the number that is zero or negative. Tests are also a kind of documentation, because they show how
the code is meant to be used and what it promises to return.

def count_words(text):
    counts = {}
    for word in text.split():
        counts[word] = counts.get(word, 0) + 1
    return counts

if __name__ == "__main__":
    print(count_words("the cat and the hat"))
)";
  return kText;
}

}  // namespace genai
