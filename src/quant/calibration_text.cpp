#include "quant/calibration_text.h"

namespace genai::quant {

const std::string& default_calibration_text() {
  static const std::string text =
      "On the morning the river froze, the baker opened her shop an hour early. She knew the ferry would not run "
      "and that the people who usually crossed to the market on the far bank would come to her instead, stamping "
      "the snow from their boots and asking for bread, coffee and news. By seven o'clock the small room was full. "
      "A schoolteacher explained to anyone who would listen that ice two inches thick could hold a person, four "
      "inches a horse, and eight a loaded cart, but that nobody should trust a river that had been moving the day "
      "before. Two boys near the window were already planning to test his numbers.\n\n"
      "To make the dough she used, for each loaf, five hundred grams of flour, three hundred and fifty grams of "
      "water, ten grams of salt and a spoonful of the starter she had kept alive for eleven years. First mix the "
      "flour and water and let them rest for half an hour. Then add the salt and the starter, fold the dough every "
      "thirty minutes for two hours, shape it, and leave it in a cool place overnight. Bake it in a very hot oven, "
      "covered for the first twenty minutes so that the steam can lift the crust.\n\n"
      "\"Will it thaw by Friday?\" asked the postman, who had three parcels for the farms across the water.\n"
      "\"Not if the wind stays in the north,\" said the baker. \"Last time it took nine days.\"\n"
      "\"Then I will walk round by the bridge at Holt. It adds six miles, but I would rather be late than wet.\"\n"
      "\"Take a loaf with you. The Millers have not been to town since the storm.\"\n\n"
      "In the afternoon the sky cleared and the temperature fell to minus fourteen degrees. The town council met "
      "in the library and agreed on four measures: the path along the quay would be gritted twice a day; the "
      "school would close at noon until the ferry ran again; volunteers would check on elderly residents living "
      "alone; and no one, child or adult, was to walk on the ice without a rope and a second person on the bank. "
      "The clerk wrote the decisions on a board outside the town hall, where people read them while their breath "
      "rose in clouds around them.\n\n"
      "Engineers who study frozen rivers measure more than thickness. Clear black ice is much stronger than the "
      "white, cloudy ice that forms from snow, and ice near the banks or around bridge piers is often thinner, "
      "because moving water and the warmth stored in stone slow its growth. A sudden change in the weather can "
      "weaken a sheet that looked safe the day before. For that reason the old rule in the valley was simple: "
      "wait for a week of hard frost, test the ice with an axe every few steps, and never cross alone.\n\n"
      "By the end of the week the children had built a snow fort on the green, the library had lent out every "
      "book about polar travel, and the baker had sold more bread than in any week since she had opened the shop. "
      "When the ferry finally sounded its horn on the following Tuesday, half the town walked down to the quay to "
      "watch it push through the broken ice, and many of them, she noticed, seemed a little sorry to see it go.\n";
  return text;
}

}  // namespace genai::quant
